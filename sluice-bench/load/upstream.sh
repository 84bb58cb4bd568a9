# Sourced by the load scripts that need a trivial upstream (relay-alloc.sh, thread-cpu.sh):
# free loopback ports, waiting for an HTTP server, and an nginx that answers 200 {"ok":true}.

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
}

wait_http() { # url: up to 20 s
  local i
  for i in $(seq 200); do
    curl -s -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

upstream_conf() { # dir port: writes dir/nginx.conf, one worker, keep-alive, no access log
  mkdir -p "$1/logs"
  cat >"$1/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $1/body;
  proxy_temp_path $1/proxy;
  fastcgi_temp_path $1/fastcgi;
  uwsgi_temp_path $1/uwsgi;
  scgi_temp_path $1/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$2;
    location / { default_type application/json; return 200 '{"ok":true}'; }
  }
}
CONF
}

nginx_bin() {
  command -v nginx || echo /usr/sbin/nginx
}
