#include "lidaremu/core/config_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

namespace lidaremu::core {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text() { return std::error_code(errno, std::generic_category()).message(); }

// Walks TOML text the way its grammar nests: header keys and dotted keys add a level per
// segment, arrays and inline tables one each. Only what the depth needs is understood; the
// rest (validity) is toml++'s job once the text is known to be shallow.
class DepthScanner {
 public:
  DepthScanner(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  std::optional<std::string> scan() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '#') {
        skip_to_line_end();
        continue;
      }
      if (c == '"' || c == '\'') {
        if (in_key_) key_started_ = true;
        skip_string();
        continue;
      }
      ++i_;
      switch (c) {
        case '\n':
          ++line_;
          if (open_.empty()) start_key();
          break;
        case '[':
          if (open_.empty() && in_key_ && key_segments_ == 1 && !key_started_) {
            read_header();
          } else {
            open_.push_back('[');
            in_key_ = false;
          }
          break;
        case '{':
          open_.push_back('{');
          start_key();
          break;
        case ']':
          if (!open_.empty() && open_.back() == '[') open_.pop_back();
          break;
        case '}':
          if (!open_.empty() && open_.back() == '{') open_.pop_back();
          in_key_ = false;
          break;
        case ',':
          if (!open_.empty() && open_.back() == '{') start_key();
          break;
        case '=':
          in_key_ = false;
          break;
        case '.':
          if (in_key_) ++key_segments_;
          break;
        case ' ':
        case '\t':
        case '\r':
          break;
        default:
          if (in_key_) key_started_ = true;
          break;
      }
      if (depth() > max_depth_) {
        return std::to_string(line_) + ": nested " + std::to_string(depth()) +
               " levels deep (tables, dotted keys, arrays and inline tables; at most " +
               std::to_string(max_depth_) + ")";
      }
    }
    return std::nullopt;
  }

 private:
  [[nodiscard]] int depth() const {
    return table_depth_ + static_cast<int>(open_.size()) +
           (in_key_ && key_started_ ? key_segments_ : 0);
  }
  void start_key() {
    in_key_ = true;
    key_started_ = false;
    key_segments_ = 1;
  }
  [[nodiscard]] bool triple_at(std::size_t at, char quote) const {
    return at + 3 <= text_.size() && text_[at] == quote && text_[at + 1] == quote &&
           text_[at + 2] == quote;
  }
  void skip_to_line_end() {
    while (i_ < text_.size() && text_[i_] != '\n') ++i_;
  }
  // A basic or literal string, single- or multi-line; escapes only in basic strings.
  void skip_string() {
    const char quote = text_[i_];
    const bool multiline = triple_at(i_, quote);
    i_ += multiline ? 3 : 1;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '\\' && quote == '"') {
        i_ += 2;
        continue;
      }
      if (c == '\n') {
        if (!multiline) return;  // unterminated: toml++ says so
        ++line_;
      }
      if (c == quote && (!multiline || triple_at(i_, quote))) {
        i_ += multiline ? 3 : 1;
        return;
      }
      ++i_;
    }
  }
  // "[a.b.c]" or "[[a.b]]": the table the following keys live in.
  void read_header() {
    if (i_ < text_.size() && text_[i_] == '[') ++i_;
    int segments = 1;
    while (i_ < text_.size() && text_[i_] != ']' && text_[i_] != '\n') {
      if (text_[i_] == '"' || text_[i_] == '\'') {
        skip_string();
        continue;
      }
      if (text_[i_] == '.') ++segments;
      ++i_;
    }
    table_depth_ = segments;
    in_key_ = false;
    skip_to_line_end_keeping_comment();
  }
  void skip_to_line_end_keeping_comment() {
    while (i_ < text_.size() && text_[i_] != '\n' && text_[i_] != '#') ++i_;
  }

  std::string_view text_;
  int max_depth_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::vector<char> open_;  // '[' arrays and '{' inline tables, innermost last
  int table_depth_ = 0;     // segments of the last [header]
  bool in_key_ = true;
  bool key_started_ = false;
  int key_segments_ = 1;
};

}  // namespace

ConfigText read_config_file(const std::filesystem::path& file, std::size_t max_bytes) {
  ConfigText out;
  // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
  const FileDescriptor fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    out.error = file.string() + ": cannot open: " + errno_text();
    return out;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    out.error = file.string() + ": cannot read: " + errno_text();
    return out;
  }
  if (!S_ISREG(info.st_mode)) {
    out.error = file.string() + ": not a regular file (a directory, FIFO, socket or device is " +
                "refused: give the path of a TOML file)";
    return out;
  }
  const auto too_large = [&] {
    return file.string() + ": larger than " + std::to_string(max_bytes) +
           " bytes (the limit for a config file)";
  };
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
    out.error = too_large();
    return out;
  }
  // Read up to one byte past the limit: the file may have grown since fstat.
  out.text.resize(max_bytes + 1);
  std::size_t have = 0;
  while (have < out.text.size()) {
    const ssize_t n = ::read(fd.get(), out.text.data() + have, out.text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = file.string() + ": cannot read: " + errno_text();
      return out;
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > max_bytes) {
    out.error = too_large();
    return out;
  }
  out.text.resize(have);
  out.text.shrink_to_fit();
  return out;
}

std::optional<std::string> find_too_deep_toml(std::string_view text, int max_depth) {
  return DepthScanner(text, max_depth).scan();
}

}  // namespace lidaremu::core
