#!/usr/bin/env python3
"""One HTTP request for the end-to-end tests: METHOD URL [BODY [TOKEN [HEADER ...]]].
A body goes as Content-Type: application/json unless a HEADER ("Name: value") says otherwise;
an empty TOKEN sends no Authorization. Prints the status code on the first line, then the body's
bytes as they came (a binary body too)."""
import sys
import urllib.error
import urllib.request

method, url = sys.argv[1], sys.argv[2]
body = sys.argv[3].encode() if len(sys.argv) > 3 and sys.argv[3] else None
token = sys.argv[4] if len(sys.argv) > 4 else ""
request = urllib.request.Request(url, data=body, method=method)
if token:
    request.add_header("Authorization", "Bearer " + token)
for header in sys.argv[5:]:
    name, value = header.split(":", 1)
    request.add_header(name.strip(), value.strip())
if body is not None and not request.has_header("Content-type"):
    request.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        status, body = response.status, response.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
sys.stdout.buffer.write(b"%d\n" % status + body)
