#!/usr/bin/env python3
"""One HTTP request for the end-to-end tests: METHOD URL [BODY [TOKEN]].
Prints the status code on the first line, then the body."""
import sys
import urllib.error
import urllib.request

method, url = sys.argv[1], sys.argv[2]
body = sys.argv[3].encode() if len(sys.argv) > 3 and sys.argv[3] else None
request = urllib.request.Request(url, data=body, method=method)
if len(sys.argv) > 4:
    request.add_header("Authorization", "Bearer " + sys.argv[4])
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        print(response.status)
        print(response.read().decode())
except urllib.error.HTTPError as e:
    print(e.code)
    print(e.read().decode())
