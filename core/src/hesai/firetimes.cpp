// The Hesai firing-time tables: when each channel fires, microseconds after its block's azimuth
// was taken, as the Hesai SDK's firetime files give it (the SDK turns one into azimuth: t x rpm x
// 6e-6 degrees, HesaiLidar_SDK_2.0 general_parser GetFiretimesCorrection). Sources per table.
#include "firetimes.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/number_text.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core::hesai {
namespace {

// PandarQT (QT64): HesaiLidar_SDK_2.0 correction/firetime_correction/"PandarQT_Firetime Correction
// File.csv" (channels 1-64, 2.31 to 136.45 us; nebula's pandar_qt64 table is the same, 10 us
// later: it counts from the column's start, the SDK from its azimuth).
constexpr std::array<double, 64> kQt64Us{
    2.31,  4.37,   6.43,   8.49,   10.54,  12.6,   14.66,  16.71,  19.16,  21.22,  23.28,
    25.34, 27.39,  29.45,  31.5,   33.56,  36.61,  38.67,  40.73,  42.78,  44.84,  46.9,
    48.95, 51.01,  53.45,  55.52,  57.58,  59.63,  61.69,  63.74,  65.8,   67.86,  70.9,
    72.97, 75.02,  77.08,  79.14,  81.19,  83.25,  85.3,   87.75,  89.82,  91.87,  93.93,
    95.98, 98.04,  100.1,  102.15, 105.2,  107.26, 109.32, 111.38, 113.43, 115.49, 117.54,
    119.6, 122.05, 124.11, 126.17, 128.22, 130.28, 132.34, 134.39, 136.45,
};

// Pandar40P: the SDK's "Pandar40P_Firetime Correction File.csv" (listed in firing order there,
// here by channel): every channel fires before the block's azimuth, -3.62 to -54.67 us (nebula's
// pandar_40p channel table: the same numbers).
constexpr std::array<double, 40> kPandar40pUs{
    -42.22, -28.47, -16.04, -3.62,  -45.49, -31.74, -47.46, -54.67, -20.62, -33.71,
    -40.91, -8.19,  -20.62, -27.16, -50.73, -8.19,  -14.74, -36.98, -45.49, -52.7,
    -23.89, -31.74, -38.95, -11.47, -18.65, -25.19, -48.76, -6.23,  -12.77, -35.01,
    -21.92, -9.5,   -43.52, -29.77, -17.35, -4.92,  -42.22, -28.47, -16.04, -3.62,
};

// Pandar64: the SDK's "Pandar64_Firetime Correction File.csv", by channel (-3.62 to -54.668 us,
// two channels a firing).
constexpr std::array<double, 64> kPandar64Us{
    -23.18,  -21.876, -20.572, -19.268, -17.964, -16.66,  -11.444, -46.796, -7.532,  -36.956,
    -50.732, -54.668, -40.892, -44.828, -31.052, -34.988, -48.764, -52.7,   -38.924, -42.86,
    -29.084, -33.02,  -46.796, -25.148, -36.956, -50.732, -27.116, -40.892, -44.828, -31.052,
    -34.988, -48.764, -25.148, -38.924, -42.86,  -29.084, -33.02,  -52.7,   -6.228,  -54.668,
    -15.356, -27.116, -10.14,  -23.18,  -4.924,  -21.876, -14.052, -17.964, -8.836,  -19.268,
    -3.62,   -20.572, -12.748, -16.66,  -7.532,  -11.444, -6.228,  -15.356, -10.14,  -4.924,
    -3.62,   -14.052, -8.836,  -12.748,
};

// QT128C2X: nebula's pandar_qt128 loop tables (ns there; the SDK reads the unit's own table over
// PTC 0xA9 and ships none). Loop 0 is nebula's loop1 (channels 33-64 and 65-128 fire; 1-32 not),
// the tail's mode flag 1; loop 1 nebula's loop2 (1-32 and 65-128), mode flag 0.
constexpr std::array<double, 128> kQt128Loop0Us{
    0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,
    0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,
    0,      0,      0,      0,      0,      0,      0,      0,      27.656, 53,     2.312,  78.344,
    81.512, 5.48,   56.168, 30.824, 33.992, 59.336, 8.648,  84.68,  87.848, 11.816, 62.504, 37.16,
    40.328, 65.672, 14.984, 91.016, 94.184, 18.152, 68.84,  43.496, 46.664, 72.008, 21.32,  97.352,
    100.52, 24.488, 75.176, 49.832, 1.456,  77.488, 26.8,   52.144, 55.312, 29.968, 80.656, 4.624,
    7.792,  83.824, 33.136, 58.48,  61.648, 36.304, 86.992, 10.96,  14.128, 90.16,  39.472, 64.816,
    67.984, 42.64,  93.328, 17.296, 20.464, 96.496, 45.808, 71.152, 74.32,  48.976, 99.664, 23.632,
    25.944, 51.288, 0.6,    76.632, 79.8,   3.768,  54.456, 29.112, 32.28,  57.624, 6.936,  82.968,
    86.136, 10.104, 60.792, 35.448, 38.616, 63.96,  13.272, 89.304, 92.472, 16.44,  67.128, 41.784,
    44.952, 70.296, 19.608, 95.64,  98.808, 22.776, 73.464, 48.12,
};
constexpr std::array<double, 128> kQt128Loop1Us{
    2.312,  78.344, 27.656, 53,     56.168, 30.824, 81.512, 5.48,   8.648,  84.68,  33.992, 59.336,
    62.504, 37.16,  87.848, 11.816, 14.984, 91.016, 40.328, 65.672, 68.84,  43.496, 94.184, 18.152,
    21.32,  97.352, 46.664, 72.008, 75.176, 49.832, 100.52, 24.488, 0,      0,      0,      0,
    0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,
    0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,      0,
    0,      0,      0,      0,      0.6,    76.632, 25.944, 51.288, 54.456, 29.112, 79.8,   3.768,
    6.936,  82.968, 32.28,  57.624, 60.792, 35.448, 86.136, 10.104, 13.272, 89.304, 38.616, 63.96,
    67.128, 41.784, 92.472, 16.44,  19.608, 95.64,  44.952, 70.296, 73.464, 48.12,  98.808, 22.776,
    26.8,   52.144, 1.456,  77.488, 80.656, 4.624,  55.312, 29.968, 33.136, 58.48,  7.792,  83.824,
    86.992, 10.96,  61.648, 36.304, 39.472, 64.816, 14.128, 90.16,  93.328, 17.296, 67.984, 42.64,
    45.808, 71.152, 20.464, 96.496, 99.664, 23.632, 74.32,  48.976,
};

// OT128 in standard resolution (operational state 2), azimuth state 0: the SDK's column of its
// "OT128_Firetime Correction File.csv" (tests/data/hesai/ot128_firetimes_ns.csv, sdk_op2_as0,
// compared by a test); nebula's standard table differs (it flags its own numbers, FORMATS-MORE.md
// section 1.4): the SDK's is the one that moves the points.
constexpr std::array<double, 128> kOt128Us{
    46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,      46.645, 34.067, 18.867, 6.289,
    40.356, 27.778, 12.578, 0,      46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,
    20.52,  16.549, 10.26,  16.549, 20.52,  3.971,  14.231, 7.942,  14.231, 7.942,  10.26,  1.653,
    1.653,  3.971,  22.838, 22.838, 14.231, 16.549, 20.52,  7.942,  10.26,  16.549, 1.653,  3.971,
    10.26,  22.838, 14.231, 3.971,  20.52,  7.942,  14.231, 16.549, 1.653,  7.942,  10.26,  22.838,
    1.653,  3.971,  20.52,  22.838, 14.231, 16.549, 20.52,  7.942,  10.26,  16.549, 1.653,  3.971,
    10.26,  22.838, 14.231, 3.971,  20.52,  7.942,  14.231, 16.549, 1.653,  7.942,  10.26,  22.838,
    1.653,  3.971,  20.52,  22.838, 46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,
    46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,      46.645, 34.067, 18.867, 6.289,
    40.356, 27.778, 12.578, 0,      46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,
    46.645, 34.067, 18.867, 6.289,  40.356, 27.778, 12.578, 0,
};

// Channels k and k + period fire together (period 0: none), first_us + step_us x (k mod period).
std::vector<double> stepped(int channels, double first_us, double step_us, int period) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(channels));
  for (int k = 0; k < channels; ++k)
    us.push_back(first_us + step_us * (period > 0 ? k % period : k));
  return us;
}

template <std::size_t N>
std::vector<double> table(const std::array<double, N>& us) {
  return {us.begin(), us.end()};
}

}  // namespace

// XT32: the SDK's "PandarXT-32_Firetime Correction File.csv", channel 1 at 6.000 us, then every
// 1.512 us (nebula's pandar_xt32: 5.632 + 0.368 + 1.512 k, the same).
Firetimes firetimes_pandar_xt32() { return {stepped(32, 6.0, 1.512, 0)}; }
// XT16: the SDK's "PandarXT-16_Firetime Correction File.csv": 6.000 us, then every 3.024 us.
Firetimes firetimes_pandar_xt16() { return {stepped(16, 6.0, 3.024, 0)}; }
// XT32M2X: the SDK's "PandarXT-32M2X_Firetime Correction File.csv": channels k and k + 16
// together, 6.000 us, then every 2.888 us (nebula's pandar_xt32m: 5.632 + 0.368 + 2.888 (k mod
// 16)).
Firetimes firetimes_pandar_xt32m() { return {stepped(32, 6.0, 2.888, 16)}; }
Firetimes firetimes_pandar_qt64() { return {table(kQt64Us)}; }
Firetimes firetimes_pandar_40p() { return {table(kPandar40pUs)}; }
Firetimes firetimes_pandar_64() { return {table(kPandar64Us)}; }
Firetimes firetimes_pandar_qt128() { return {table(kQt128Loop0Us), table(kQt128Loop1Us)}; }
Firetimes firetimes_pandar_ot128() { return {table(kOt128Us)}; }

std::string_view firetimes_file_note(const SensorModel& model) {
  if (model.hesai.firetime_us.empty() && *model.hesai.no_firetimes_file == '\0') {
    return "the model has no firing-time table";
  }
  return model.hesai.no_firetimes_file;
}

std::string firetimes_file(const SensorModel& model) {
  const Firetimes& loops = model.hesai.firetime_us;
  if (!firetimes_file_note(model).empty()) return {};
  const auto channels = static_cast<std::size_t>(model.channels);
  std::string text;
  if (loops.size() == 1) {
    // The SDK's general parser: a header line, then "channel,us" (channels from 1).
    text = "Channel,fire time(us)\n";
    for (std::size_t ch = 0; ch < channels; ++ch) {
      text += std::to_string(ch + 1) + "," + shortest_decimal(loops[0][ch]) + "\n";
    }
    return text;
  }
  // The QT128's (the SDK's 3.2 parser): "EEFF" first; fields 1 and 3 of the second line the
  // horizontal resolution mode and the loop count; a header it skips; then per channel, each
  // loop's channel and time. The labels are ours: the parser reads fields by place.
  text = "EEFF,1,1\nHorizontalResolutionMode,0,LoopNum," + std::to_string(loops.size()) + "\n";
  for (std::size_t l = 0; l < loops.size(); ++l) {
    text += (l == 0 ? "" : ",") + std::string("Loop") + std::to_string(l) + " Channel,Loop" +
            std::to_string(l) + " Firetime(us)";
  }
  text += "\n";
  for (std::size_t ch = 0; ch < channels; ++ch) {
    for (std::size_t l = 0; l < loops.size(); ++l) {
      text += (l == 0 ? "" : ",") + std::to_string(ch + 1) + "," + shortest_decimal(loops[l][ch]);
    }
    text += "\n";
  }
  return text;
}

std::vector<std::vector<double>> parse_firetimes_file(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("firetime line " + std::to_string(line_number) + " ('" + line +
                              "'): " + why);
  };
  const auto fields_of = [](const std::string& row) {
    std::vector<std::string> fields;
    std::istringstream cells(row);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    return fields;
  };
  const auto number = [&](const std::string& field) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(field, &used);
    } catch (const std::exception&) {
      throw fail("'" + field + "' is not a number");
    }
    if (used != field.size() || !std::isfinite(v) || std::fabs(v) > 1e6) {
      throw fail("'" + field + "' is not a firing time in us");
    }
    return v;
  };
  std::size_t loop_count = 1;
  std::vector<std::vector<double>> loops;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto fields = fields_of(line);
    if (line_number == 1) {
      if (!fields.empty() && (fields[0] == "EEFF" || fields[0] == "eeff")) {
        std::getline(in, line);
        ++line_number;
        const auto counts = fields_of(line);
        if (counts.size() < 4) throw fail("expected the resolution mode and the loop count");
        loop_count = static_cast<std::size_t>(number(counts[3]));
        if (loop_count < 1 || loop_count > 4) throw fail("a loop count of 1 to 4 expected");
        std::getline(in, line);  // the header
        ++line_number;
      }
      loops.assign(loop_count, {});
      continue;
    }
    if (line.empty()) continue;
    if (fields.size() != 2 * loop_count) {
      throw fail("expected " + std::to_string(loop_count) + " channel, time pair(s)");
    }
    // The SDK keys each time by its channel (its Pandar40P file lists them in firing order).
    for (std::size_t l = 0; l < loop_count; ++l) {
      const double channel = number(fields[2 * l]);
      if (channel < 1 || channel > 512 || channel != std::floor(channel)) {
        throw fail("a channel from 1 to 512 expected");
      }
      auto& times = loops[l];
      const auto at = static_cast<std::size_t>(channel) - 1;
      if (times.size() <= at) times.resize(at + 1, std::nan(""));
      if (!std::isnan(times[at])) throw fail("channel given twice");
      times[at] = number(fields[2 * l + 1]);
    }
  }
  if (loops.empty() || loops[0].empty()) throw std::runtime_error("firetimes: no channel rows");
  for (const auto& times : loops) {
    for (std::size_t ch = 0; ch < times.size(); ++ch) {
      if (std::isnan(times[ch]) || times.size() != loops[0].size()) {
        throw std::runtime_error("firetimes: channel " + std::to_string(ch + 1) +
                                 " missing (every channel from 1 to the last, in every loop)");
      }
    }
  }
  return loops;
}

}  // namespace lidaremu::core::hesai
