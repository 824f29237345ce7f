#!/usr/bin/env bash
# A local three-node Wharf to try: three `wharf serve` on loopback sharing one Postgres
# database, one REPOS_DIR, one SECRET_KEY and LFS objects in a bucket of a local Swift
# (scripts/swift.sh). For trying it by hand, not for production (docs/operations.md).
#
#   scripts/cluster.sh start [dir]   start it into <dir> (default /tmp/wharf-cluster), print
#                                    the three addresses and the admin token
#   scripts/cluster.sh stop [dir]    stop the nodes and Swift, drop the database it created,
#                                    remove <dir>
#
# CLUSTER_DATABASE_URL   a Postgres database to use (its content is kept on stop); without it
#                        a database wharf_cluster_<random> is created with createdb on
#                        CLUSTER_PG_URL (default postgres://postgres@127.0.0.1:5432) and
#                        dropped on stop
# CLUSTER_PORT           the first node's port (default 8081; the others follow)
# SWIFT_PORT_BASE        Swift's first port (default 6200, five ports)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

start() {
  local dir=$1 port=${CLUSTER_PORT:-8081}
  if [ -e "$dir/pids" ]; then
    echo "cluster.sh: $dir already holds a cluster (scripts/cluster.sh stop $dir)" >&2
    exit 1
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  : >"$dir/pids"

  local database=${CLUSTER_DATABASE_URL:-}
  if [ -z "$database" ]; then
    local pg=${CLUSTER_PG_URL:-postgres://postgres@127.0.0.1:5432} name
    name=wharf_cluster_$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
    createdb --maintenance-db="$pg/postgres" "$name"
    echo "$pg/postgres $name" >"$dir/created-db"
    database=$pg/$name
  fi

  "$here/swift.sh" start "$dir/swift" >/dev/null
  # shellcheck disable=SC1091
  . "$dir/swift/env"
  local key
  key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cat >"$dir/env" <<EOF
export DATABASE_URL=$database
export REPOS_DIR=$dir/repos
export SECRET_KEY=$key
export LFS_STORE=s3
export S3_ENDPOINT=$S3_ENDPOINT
export S3_REGION=$S3_REGION
export S3_BUCKET=wharf-lfs
export S3_ACCESS_KEY_ID=$S3_ACCESS_KEY_ID
export S3_SECRET_ACCESS_KEY=$S3_SECRET_ACCESS_KEY
export HOST=127.0.0.1
export LOG_LEVEL=info
EOF

  # Node 1 first: it migrates the database, creates the bucket and the first admin.
  local i token=''
  for i in 1 2 3; do
    mkdir -p "$dir/node$i"
    (
      # shellcheck disable=SC1091
      . "$dir/env"
      export DATA_DIR=$dir/node$i PORT=$((port + i - 1)) S3_CREATE_BUCKET=$([ "$i" = 1 ] && echo true || echo false)
      exec setsid node "$root/bin/wharf.js" serve >"$dir/node$i.log" 2>&1 </dev/null
    ) &
    echo $! >>"$dir/pids"
    local _
    for _ in $(seq 1 240); do
      grep -q 'listening on' "$dir/node$i.log" 2>/dev/null && break
      if ! kill -0 "$(tail -n 1 "$dir/pids")" 2>/dev/null; then
        echo "cluster.sh: node $i exited at start:" >&2
        tail -n 20 "$dir/node$i.log" >&2
        stop "$dir"
        exit 1
      fi
      sleep 0.25
    done
    if ! grep -q 'listening on' "$dir/node$i.log"; then
      echo "cluster.sh: node $i did not listen within 60 s" >&2
      stop "$dir"
      exit 1
    fi
    [ "$i" = 1 ] && token=$(sed -n 's/.*sign in with this token: \(wharf_[^ ]*\).*/\1/p' "$dir/node1.log" | head -n 1)
  done

  echo "three Wharf nodes on one Postgres ($database), LFS in bucket wharf-lfs of Swift at $S3_ENDPOINT:"
  for i in 1 2 3; do echo "  node $i: http://127.0.0.1:$((port + i - 1))   (log: $dir/node$i.log)"; done
  if [ -n "$token" ]; then
    echo "admin token: $token"
  else
    echo "admin token: none printed (the database already had users)"
  fi
  echo "settings: $dir/env; stop with: scripts/cluster.sh stop $dir"
}

stop() {
  local dir=$1
  if [ -f "$dir/pids" ]; then
    for pid in $(cat "$dir/pids"); do kill "$pid" 2>/dev/null || true; done
    for _ in $(seq 1 50); do
      alive=0
      for pid in $(cat "$dir/pids"); do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ $alive = 0 ] && break
      sleep 0.2
    done
    for pid in $(cat "$dir/pids"); do kill -9 "$pid" 2>/dev/null || true; done
  fi
  [ -d "$dir/swift" ] && "$here/swift.sh" stop "$dir/swift"
  if [ -f "$dir/created-db" ]; then
    read -r maintenance name <"$dir/created-db"
    dropdb --maintenance-db="$maintenance" --if-exists "$name" || echo "cluster.sh: could not drop database $name" >&2
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start "${2:-/tmp/wharf-cluster}" ;;
  stop) stop "${2:-/tmp/wharf-cluster}" ;;
  *)
    echo "usage: scripts/cluster.sh start [dir] | stop [dir]" >&2
    exit 2
    ;;
esac
