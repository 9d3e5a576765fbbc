// What every row of the settings schema implies: storing a value read from a flag or a file,
// reading it back as text, and the checks the row states (range, choices, families).
#include "lidaremu/daemon/config/settings_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <type_traits>

#include "lidaremu/core/number_text.hpp"

namespace lidaremu::daemon {
namespace {

template <typename M>
struct MemberOf;
template <typename T, typename C>
struct MemberOf<T C::*> {
  using Class = C;
  using Type = T;
};

// The values as read back: a sensor's and the daemon's, either may be missing.
struct ReadValues {
  const SensorFlags* sensor = nullptr;
  const DaemonSettings* daemon = nullptr;
};

// Calls `use` with a reference to the row's field in `values` (a physics parameter: its override,
// added when the values are writable), or not at all when the values lack that side or the
// parameter was not given.
template <typename Values, typename Use>
void with_field(const SettingRow& row, const Values& values, Use&& use) {
  std::visit(
      [&](auto target) {
        using Target = decltype(target);
        if constexpr (std::is_same_v<Target, PhysicsParamField>) {
          if (values.sensor == nullptr) return;
          auto& params = values.sensor->physics_params;
          auto it = std::find_if(params.begin(), params.end(),
                                 [&](const auto& p) { return p.first == target; });
          if constexpr (std::is_same_v<Values, SettingValues>) {
            if (it == params.end()) {
              params.emplace_back(target, 0.0);
              it = std::prev(params.end());
            }
          } else if (it == params.end()) {
            return;
          }
          use(it->second);
        } else if constexpr (std::is_same_v<typename MemberOf<Target>::Class, SensorFlags>) {
          if (values.sensor != nullptr) use(values.sensor->*target);
        } else {
          if (values.daemon != nullptr) use(values.daemon->*target);
        }
      },
      row.target);
}

// Whole numbers written out (1000000, not 1e+06), others as their shortest decimal.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<std::int64_t>(v));
  return core::shortest_decimal(v);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto comma = std::min(text.find(',', from), text.size());
    out.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

template <typename T>
std::string field_text(const T& field) {
  if constexpr (std::is_same_v<T, std::string>) {
    return field;
  } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
    return field.string();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return join(field);
  } else if constexpr (std::is_same_v<T, double>) {
    return number_text(field);
  } else {
    return std::to_string(field);
  }
}

// Stores `value` into a field of type T, or says what the field takes.
template <typename T>
std::optional<std::string> store_into(T& field, const SettingValue& value) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>) {
    if (const auto* text = std::get_if<std::string>(&value)) {
      field = *text;
      return std::nullopt;
    }
    return "wrong type (expected a string)";
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
      field = *list;
      return std::nullopt;
    }
    return "must be an array of strings";
  } else if constexpr (std::is_same_v<T, double>) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      field = static_cast<double>(*i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      field = *d;
    } else {
      return "wrong type (expected a number)";
    }
    return std::nullopt;
  } else {
    const auto* i = std::get_if<std::int64_t>(&value);
    if (i == nullptr) return "wrong type (expected a whole number)";
    if constexpr (std::is_same_v<T, std::uint64_t>) {
      if (*i < 0) return "must not be negative";
      field = static_cast<std::uint64_t>(*i);
    } else {
      if (*i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max()) {
        return "wrong type (" + std::to_string(*i) + " is out of range for a whole number)";
      }
      field = static_cast<int>(*i);
    }
    return std::nullopt;
  }
}

bool one_of(std::string_view choices, const std::string& value) {
  std::size_t from = 0;
  while (from <= choices.size()) {
    const auto bar = std::min(choices.find('|', from), choices.size());
    if (choices.substr(from, bar - from) == value) return true;
    from = bar + 1;
  }
  return false;
}

std::string range_text(const SettingRow& row) {
  std::string text = number_text(row.range->lo) + ".." + number_text(row.range->hi);
  if (!row.unit.empty()) text += " " + std::string(row.unit);
  return text;
}

// The checks a row states, on the value it holds.
void check_row(const SettingRow& row, const ReadValues& values, const std::string& at,
               std::vector<std::string>& problems) {
  const std::string path = setting_path(row, at);
  with_field(row, values, [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_arithmetic_v<T>) {
      const auto v = static_cast<double>(field);
      if (row.unset && v == *row.unset) return;
      if (row.range && !(v >= row.range->lo && v <= row.range->hi)) {
        problems.push_back(path + " = " + field_text(field) + ": expected " + range_text(row));
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!row.choices.empty() && !one_of(row.choices, field)) {
        problems.push_back(path + " = '" + field + "': expected " + std::string(row.choices));
      }
    }
  });
}

}  // namespace

SettingKind setting_kind(const SettingRow& row) {
  if (row.pair) return SettingKind::kPair;
  return std::visit(
      [](auto target) {
        if constexpr (std::is_same_v<decltype(target), PhysicsParamField>) {
          return SettingKind::kNumber;
        } else {
          using T = typename MemberOf<decltype(target)>::Type;
          if constexpr (std::is_same_v<T, std::vector<std::string>>) return SettingKind::kTexts;
          if constexpr (std::is_integral_v<T>) return SettingKind::kWholeNumber;
          if constexpr (std::is_floating_point_v<T>) return SettingKind::kNumber;
          return SettingKind::kText;
        }
      },
      row.target);
}

const SettingRow* setting_by_key(SettingScope scope, std::string_view key) {
  for (const auto& row : settings_schema()) {
    if (row.scope == scope && row.key == key) return &row;
  }
  return nullptr;
}

std::optional<std::string> store_setting(const SettingRow& row, const SettingValue& value,
                                         const SettingValues& into) {
  std::optional<std::string> error;
  with_field(row, into, [&](auto& field) { error = store_into(field, value); });
  if (!error && row.given != nullptr && into.daemon != nullptr) into.daemon->*row.given = true;
  return error;
}

std::optional<std::string> store_setting_text(const SettingRow& row, const std::string& text,
                                              const SettingValues& into) {
  const SettingKind kind = setting_kind(row);
  if (kind == SettingKind::kTexts) return store_setting(row, split_commas(text), into);
  if (kind != SettingKind::kWholeNumber && kind != SettingKind::kNumber) {
    return store_setting(row, text, into);
  }
  const char* end = text.data() + text.size();
  if (kind == SettingKind::kWholeNumber) {
    std::int64_t i = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), end, i);
    if (ec != std::errc() || ptr != end || text.empty()) {
      return "'" + text + "': expected a whole number";
    }
    return store_setting(row, i, into);
  }
  double d = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), end, d);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(d)) {
    return "'" + text + "': expected a number";
  }
  return store_setting(row, d, into);
}

namespace {
std::string text_of(const SettingRow& row, const ReadValues& from) {
  std::string text;
  with_field(row, from, [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_arithmetic_v<T>) {
      if (row.unset && static_cast<double>(field) == *row.unset) return;
    }
    text = field_text(field);
  });
  return text;
}
}  // namespace

std::string setting_text(const SettingRow& row, const SettingValues& from) {
  return text_of(row, {from.sensor, from.daemon});
}

std::string setting_default_text(const SettingRow& row) {
  if (row.family_default != nullptr) {
    std::string text(row.default_text);
    for (const core::Family* family : core::all_families()) {
      text += (family == core::all_families().front() ? " " : ", ") + std::string(family->name()) +
              " " + row.family_default(*family);
    }
    return text;
  }
  if (!row.default_text.empty()) return std::string(row.default_text);
  const SensorFlags sensor;
  const DaemonSettings daemon;
  return text_of(row, {&sensor, &daemon});
}

std::string setting_accepted(const SettingRow& row) {
  if (row.range) return range_text(row);
  if (row.listed != nullptr) return row.listed();
  return std::string(row.choices);
}

std::string setting_path(const SettingRow& row, const std::string& at) {
  if (at == "--" && !row.flag.empty()) return std::string(row.flag);
  return at + std::string(row.key);
}

void check_sensor_values(const SensorFlags& f, core::SensorFamily family, const std::string& at,
                         std::vector<std::string>& problems) {
  const SensorFlags defaults;
  for (const auto& row : settings_schema()) {
    if (row.scope != SettingScope::kSensor) continue;
    check_row(row, {&f, nullptr}, at, problems);
    if (!row.families.contains(family)) {
      const std::string value = text_of(row, {&f, nullptr});
      if (value != text_of(row, {&defaults, nullptr})) {
        const std::string name = core::family_name(family);
        const bool vowel = std::string_view("AEIOU").find(name.front()) != std::string_view::npos;
        problems.push_back(setting_path(row, at) + " = '" + value + "': expected nothing for " +
                           (vowel ? "an " : "a ") + name + " model (" + family_list(row.families) +
                           " only)");
      }
    }
  }
}

void check_daemon_values(const DaemonSettings& d, const std::string& at,
                         std::vector<std::string>& problems) {
  for (const auto& row : settings_schema()) {
    if (row.scope == SettingScope::kDaemon) check_row(row, {nullptr, &d}, at, problems);
  }
}

std::string family_list(FamilySet families) {
  std::vector<std::string_view> names;
  for (const core::Family* family : core::all_families()) {
    if (families.applies == nullptr || families.applies(*family)) names.push_back(family->name());
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " and " : ", ";
    text += names[i];
  }
  return text;
}

std::string all_family_names() { return family_list(FamilySet{}); }

}  // namespace lidaremu::daemon
