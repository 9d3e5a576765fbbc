#!/usr/bin/env bash
# Every C++ source in the repository as clang-format (.clang-format) writes it; a diff fails.
# The Unreal plugin keeps Epic's style (clients/engines/unreal/.clang-format disables it).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z '*.cpp' '*.hpp' '*.h' | xargs -0 clang-format --dry-run -Werror
echo "format: every C++ source as clang-format writes it"
