-- wrk script: a streamed chat completion asking for exactly 64 tokens.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"mock-model","messages":[{"role":"user","content":"Tell me a story about a benchmark"}],"max_completion_tokens":64,"stream":true,"stream_options":{"include_usage":true}}'
