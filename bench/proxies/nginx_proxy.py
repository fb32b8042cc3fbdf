"""nginx as a plain reverse proxy on loopback: the floor any proxy hop costs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.proxies.installed import nginx_binary
from plumbline.child_process import ServerProcess, free_port

# One worker process (the other proxies run one event loop too), upstream keep-alive, no
# access log, and no buffering either way so server-sent events pass as they come.
CONFIG = """\
daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 8192; }}
http {{
  access_log off;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;
  upstream backend {{
{servers}
    keepalive 256;
  }}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location / {{
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering {request_buffering};
      proxy_read_timeout 300s;
{retry}
    }}
  }}
}}
"""


class NginxProxy(ServerProcess):
    """nginx in the foreground with its own config, proxying to backends on loopback.

    Several backend ports are balanced round-robin, as a load balancer in front of replicas;
    `retry_posts` lets a POST go to the next one when its connection fails before an answer (a
    draining replica closing a kept connection), as a load balancer in front of replicas must.
    """

    def __init__(self, *backend_ports: int, retry_posts: bool = False) -> None:
        if not backend_ports:
            raise ValueError("nginx needs at least one backend port")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        work = Path(tempfile.mkdtemp(prefix="plumbline-nginx-"))
        config = work / "nginx.conf"
        servers = "\n".join(f"    server 127.0.0.1:{port};" for port in backend_ports)
        # A retried POST needs its body kept: nginx cannot resend one it streamed through.
        retry = "      proxy_next_upstream error timeout non_idempotent;" if retry_posts else ""
        text = CONFIG.format(
            work=work,
            port=self.port,
            servers=servers,
            retry=retry,
            request_buffering="on" if retry_posts else "off",
        )
        config.write_text(text)
        binary = str(nginx_binary())
        # -e: the compiled-in error log under /var/log is never opened.
        args = [binary, "-p", str(work), "-c", str(config), "-e", str(work / "error.log")]
        super().__init__(args, f"{self.url}/health")
