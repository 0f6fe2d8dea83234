-- wrk: POST a small body, as curl -d hello does.
wrk.method = "POST"
wrk.body = "hello"
wrk.headers["Content-Type"] = "text/plain"
