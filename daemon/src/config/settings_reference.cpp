// The reference pages' tables, written from the settings schema (docs/flags.md, docs/config.md):
// `lidaremud --reference flags|config` prints them, scripts/update_reference.sh puts them in the
// pages, and test_settings_schema fails when a committed page differs.
#include <sstream>

#include "lidaremu/daemon/config/settings_schema.hpp"

namespace lidaremu::daemon {
namespace {

// A table cell: pipes escaped, so that "a|b" stays one cell.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string code(std::string_view text) { return text.empty() ? "" : "`" + cell(text) + "`"; }

std::string meaning(const SettingRow& row) {
  std::string text(row.doc.empty() ? row.help : row.doc);
  if (!row.families.all()) text += " (" + family_list(row.families) + " only)";
  return cell(text);
}

std::string default_of(const SettingRow& row) {
  const std::string text = setting_default_text(row);
  if (text.empty()) return "—";
  return row.default_text.empty() ? code(text) : cell(text);
}

std::string changed_by(const SettingRow& row) {
  if (row.change == kAtStart) return "start";
  std::string text;
  const auto add = [&](const char* what) {
    text += (text.empty() ? "" : ", ") + std::string(what);
  };
  if ((row.change & kOnReload) != 0) add("SIGHUP");
  if ((row.change & kByControlApi) != 0) add("`PUT .../weather`");
  if ((row.change & kBySensorApi) != 0) add("the unit's API");
  return text;
}

std::string type_of(const SettingRow& row) {
  switch (setting_kind(row)) {
    case SettingKind::kText:
      return "string";
    case SettingKind::kWholeNumber:
      return "whole number";
    case SettingKind::kNumber:
      return "number";
    case SettingKind::kTexts:
      return "strings";
    case SettingKind::kPair:
      return "[START, END]";
  }
  return "string";
}

std::string file_key(const SettingRow& row) {
  return code((row.scope == SettingScope::kDaemon ? "daemon." : "") + std::string(row.key));
}

}  // namespace

std::string flags_reference_markdown() {
  std::ostringstream out;
  out << "| flag | in the file | default | accepts | changed by | meaning |\n"
      << "|---|---|---|---|---|---|\n";
  for (const auto& row : settings_schema()) {
    if (row.flag.empty()) continue;
    std::string flag(row.flag);
    if (!row.metavar.empty()) flag += " " + std::string(row.metavar);
    if (!row.alias.empty()) flag += "`, `" + std::string(row.alias);
    out << "| " << code(flag) << " | " << file_key(row) << " | " << default_of(row) << " | "
        << code(setting_accepted(row)) << " | " << changed_by(row) << " | " << meaning(row)
        << " |\n";
  }
  return out.str();
}

std::string config_reference_markdown() {
  std::ostringstream out;
  const auto table = [&](SettingScope scope, bool params) {
    out << "| key | type | flag | default | accepts | changed by | meaning |\n"
        << "|---|---|---|---|---|---|---|\n";
    for (const auto& row : settings_schema()) {
      const bool is_param = row.key.starts_with("physics_params.");
      if (row.scope != scope || is_param != params) continue;
      out << "| " << code(row.key) << " | " << type_of(row) << " | " << code(row.flag) << " | "
          << default_of(row) << " | " << code(setting_accepted(row)) << " | " << changed_by(row)
          << " | " << meaning(row) << " |\n";
    }
  };
  out << "### `[daemon]`\n\n";
  table(SettingScope::kDaemon, false);
  out << "\n### `[[sensor]]`\n\n";
  table(SettingScope::kSensor, false);
  out << "\n### `physics_params` (in a `[[sensor]]`; defaults from the model's datasheet)\n\n";
  table(SettingScope::kSensor, true);
  return out.str();
}

}  // namespace lidaremu::daemon
