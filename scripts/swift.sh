#!/usr/bin/env bash
# A local OpenStack Swift with its S3 API (s3api + tempauth) on loopback, for the S3 LFS
# store's tests and for trying LFS_STORE=s3 by hand. Debian's packages, no mock.
#
#   scripts/swift.sh install        install Swift and memcached from Debian when missing
#   scripts/swift.sh start <dir>    start one into <dir> (created; must be empty or absent),
#                                   wait until an S3 request is answered, write <dir>/env
#   scripts/swift.sh stop <dir>     stop the one started into <dir> and remove <dir>
#
# <dir>/env holds S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY and
# SWIFT_DIR, one `export NAME=value` a line. SWIFT_PORT_BASE (default 6200) sets the ports:
# object base, container base+1, account base+2, the proxy (S3 endpoint) base+3,
# memcached base+4; SWIFT_PORT_BASE=auto picks five free ones between 20000 and 40000
# (what the tests and benches use, so several can run at once).
set -euo pipefail

packages=(swift swift-proxy swift-account swift-container swift-object memcached)

installed() {
  command -v swift-proxy-server >/dev/null && command -v swift-object-server >/dev/null &&
    command -v swift-container-server >/dev/null && command -v swift-account-server >/dev/null &&
    command -v swift-ring-builder >/dev/null && command -v memcached >/dev/null
}

install() {
  if installed; then return 0; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
}

# The cluster's hash prefix and suffix, random for each start (its data is temporary), in
# the swift.conf of its own swift_dir: Debian's /etc/swift/swift.conf (`changeme`) is never read.
hash_conf() {
  cat <<EOF
[swift-hash]
swift_hash_path_prefix = $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
swift_hash_path_suffix = $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')

[storage-policy:0]
name = Policy-0
default = yes
EOF
}

server_conf() { # type port dir user
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $2
workers = 0
user = $4
swift_dir = $3/etc
devices = $3/srv
mount_check = false
log_level = WARNING

[pipeline:main]
pipeline = $1-server

[app:$1-server]
use = egg:swift#$1
EOF
}

proxy_conf() { # port dir user memcached-port
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 0
user = $3
swift_dir = $2/etc
log_level = WARNING

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk tempurl ratelimit s3api tempauth copy container-quotas account-quotas slo dlo versioned_writes proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$4

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:tempurl]
use = egg:swift#tempurl
[filter:ratelimit]
use = egg:swift#ratelimit
[filter:copy]
use = egg:swift#copy
[filter:container-quotas]
use = egg:swift#container_quotas
[filter:account-quotas]
use = egg:swift#account_quotas
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
EOF
}

# True when nothing answers on a loopback port (bash's own /dev/tcp: no tool needed).
port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A base of five consecutive free ports between 20000 and 40000.
free_port_base() {
  local base i
  for _ in $(seq 1 100); do
    base=$((20000 + 5 * (RANDOM % 4000)))
    for i in 0 1 2 3 4; do port_free $((base + i)) || continue 2; done
    echo "$base"
    return 0
  done
  echo "swift.sh: found no five free ports" >&2
  return 1
}

start() {
  local dir=$1 base=${SWIFT_PORT_BASE:-6200} user
  if [ "$base" = auto ]; then base=$(free_port_base); fi
  user=$(id -un)
  if ! installed; then
    echo "swift.sh: Swift is not installed (run scripts/swift.sh install)" >&2
    exit 3
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -e "$dir/pids" ]; then
    echo "swift.sh: $dir already holds a Swift" >&2
    exit 1
  fi
  mkdir -p "$dir/etc" "$dir/srv/sdb1" "$dir/log"
  hash_conf >"$dir/etc/swift.conf"
  local object=$base container=$((base + 1)) account=$((base + 2)) proxy=$((base + 3)) cache=$((base + 4))
  # The three rings side by side (each builder is a Python start-up or three).
  for ring in object:$object container:$container account:$account; do
    (
      cd "$dir/etc"
      swift-ring-builder "${ring%%:*}.builder" create 10 1 1 >/dev/null
      swift-ring-builder "${ring%%:*}.builder" add "r1z1-127.0.0.1:${ring##*:}/sdb1" 100 >/dev/null
      swift-ring-builder "${ring%%:*}.builder" rebalance >/dev/null
    ) &
  done
  wait
  for ring in object container account; do
    [ -f "$dir/etc/$ring.ring.gz" ] || { echo "swift.sh: the $ring ring was not built" >&2; rm -rf "$dir"; exit 1; }
  done
  server_conf object "$object" "$dir" "$user" >"$dir/etc/object-server.conf"
  server_conf container "$container" "$dir" "$user" >"$dir/etc/container-server.conf"
  server_conf account "$account" "$dir" "$user" >"$dir/etc/account-server.conf"
  proxy_conf "$proxy" "$dir" "$user" "$cache" >"$dir/etc/proxy-server.conf"

  # Each in its own session, so that a test runner's signals to its group do not reach them; stop kills them by pid.
  setsid memcached -l 127.0.0.1 -p "$cache" -U 0 -m 32 -u "$user" >"$dir/log/memcached.log" 2>&1 </dev/null &
  echo $! >>"$dir/pids"
  for server in object container account proxy; do
    setsid "swift-$server-server" "$dir/etc/$server-server.conf" >"$dir/log/$server.log" 2>&1 </dev/null &
    echo $! >>"$dir/pids"
  done
  cat >"$dir/env" <<EOF
export S3_ENDPOINT=http://127.0.0.1:$proxy
export S3_REGION=us-east-1
export S3_ACCESS_KEY_ID=test:tester
export S3_SECRET_ACCESS_KEY=testing
export SWIFT_DIR=$dir
EOF
  # Ready when an S3 request (signed, listing the buckets) is answered.
  local here
  here=$(cd "$(dirname "$0")" && pwd)
  for _ in $(seq 1 120); do
    if (. "$dir/env" && node "$here/swiftReady.mjs") 2>/dev/null; then
      cat "$dir/env"
      return 0
    fi
    for pid in $(cat "$dir/pids"); do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "swift.sh: a server exited at start; its logs:" >&2
        tail -n 20 "$dir"/log/*.log >&2
        stop "$dir"
        exit 1
      fi
    done
    sleep 0.25
  done
  echo "swift.sh: Swift did not answer S3 requests within 30 s" >&2
  stop "$dir"
  exit 1
}

stop() {
  local dir=$1
  if [ -f "$dir/pids" ]; then
    for pid in $(cat "$dir/pids"); do kill "$pid" 2>/dev/null || true; done
    for _ in $(seq 1 40); do
      alive=0
      for pid in $(cat "$dir/pids"); do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ $alive = 0 ] && break
      sleep 0.1
    done
    for pid in $(cat "$dir/pids"); do kill -9 "$pid" 2>/dev/null || true; done
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  install) install ;;
  installed) installed ;;
  start) start "${2:?usage: swift.sh start <dir>}" ;;
  stop) stop "${2:?usage: swift.sh stop <dir>}" ;;
  *)
    echo "usage: scripts/swift.sh install | installed | start <dir> | stop <dir>" >&2
    exit 2
    ;;
esac
