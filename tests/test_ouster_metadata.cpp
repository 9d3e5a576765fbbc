// Ouster: the metadata reader against every real metadata file and every file the SDK's own tests
// call malformed, and the metadata the daemon serves for each model.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "daemon_process.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/sensor_model.hpp"

using namespace lidaremu::core;

TEST_CASE("Ouster metadata reader: every real file accepted, every file the SDK rejects refused",
          "[format][ouster][real]") {
  for (const char* good : {"OS-0-128-U1_v2.3.0_1024x10.json", "OS-0-32-U1_v2.2.0_1024x10.json",
                           "OS-1-128_v2.3.0_1024x10.json", "OS-1-32-G_v2.1.1_1024x10.json",
                           "OS-1-64_sensor_config_reduced.json", "OS-2-128-U1_v2.3.0_1024x10.json",
                           "OS-2-32-U0_v2.0.0_1024x10.json", "crc_test.json"}) {
    INFO(good);
    CHECK_NOTHROW(ouster::parse_metadata(
        lidaremu::test::slurp(lidaremu::test::data_path(std::string("ouster/") + good))));
  }
  // ouster-sdk's tests/metadata/malformed, each with the reason our reader gives.
  for (const auto& [bad, reason] :
       {std::pair{"complete_but_all_zeros_legacy.json", "every beam angle is zero"},
        std::pair{"garbled_legacy_and_nonlegacy.json", "needs all seven sections"},
        std::pair{"incomplete_data_format_legacy.json", "/data_format/columns_per_frame: missing"},
        std::pair{"incomplete_data_format_nonlegacy.json",
                  "/lidar_data_format/pixels_per_column: missing"},
        std::pair{"incomplete_no_calref_nonlegacy.json", "/calibration_status: missing"},
        std::pair{"incomplete_no_sensor_info_nonlegacy.json", "/sensor_info: missing"},
        std::pair{"incorrect_nbeam_angles_legacy_113.json", "length differs"},
        std::pair{"legacy_with_calibration_status.json", "needs all seven sections"}}) {
    INFO(bad);
    CHECK_THROWS_WITH(ouster::parse_metadata(lidaremu::test::slurp(
                          lidaremu::test::data_path(std::string("ouster/malformed/") + bad))),
                      Catch::Contains(reason));
  }
  // What the daemon serves passes the same checks, for every model.
  for (const SensorModel* model : all_sensor_models()) {
    if (model->family != SensorFamily::kOuster) continue;
    const auto pattern = *make_ouster_scan(*model, 1024, 10).pattern;
    CHECK_NOTHROW(ouster::parse_metadata(ouster::metadata_json(pattern, {1, 1}, {})));
  }
}
