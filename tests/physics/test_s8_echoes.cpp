// PHYSICS.md 8: echo selection and pulse width.
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("8: echo pulse width grows with amplitude and with grazing incidence",
          "[physics][echoes]") {
  const double tau = 5e-9;
  CHECK(physics::echo_pulse_width_s(1.0, 2.0, tau, 0) == 0.0);  // below the threshold
  // At twice the threshold: 2 tau (1 - (2/pi) asin(sqrt(1/2))) = tau.
  CHECK(physics::echo_pulse_width_s(2.0, 1.0, tau, 0) == Approx(tau));
  CHECK(physics::echo_pulse_width_s(100.0, 1.0, tau, 0) >
        physics::echo_pulse_width_s(10.0, 1.0, tau, 0));
  CHECK(physics::echo_pulse_width_s(10.0, 1.0, tau, 0.3) ==
        Approx(physics::echo_pulse_width_s(10.0, 1.0, tau, 0) + 2 * 0.3 / physics::kSpeedOfLight));
  Bench bench("vlp16");
  const std::size_t beam = 8 * 16 + 7;
  const Eigen::Vector3d d = bench.direction(beam);
  const Eigen::Vector3d side = d.cross(Eigen::Vector3d::UnitZ()).normalized();
  // Same amplitude (30 % at 80 degrees vs 5.2 % head-on): only the footprint's range extent
  // on the tilted surface differs.
  bench.set(beam, 0, 0, d * 30, -d, kFivePointTwoPercent);
  const double head_on = bench.run(bench.settings()).pulse_width_ns[beam];
  const double t = physics::deg_to_rad(80);
  bench.set(beam, 0, 0, d * 30, -d * std::cos(t) + side * std::sin(t), kThirtyPercent);
  const double grazing = bench.run(bench.settings()).pulse_width_ns[beam];
  const double footprint = 2 * physics::beam_radius_m(0.0055, 0.00106, 30);
  INFO("head-on " << head_on << " ns, grazing " << grazing << " ns");
  CHECK(grazing - head_on ==
        Approx(2 * footprint * std::tan(t) / physics::kSpeedOfLight * 1e9).margin(0.3));
  CHECK(head_on > 0);
  CHECK(grazing > head_on);
}

TEST_CASE("8: strongest, last, first, dual, triple, first + last, first + strongest selection",
          "[physics][echoes]") {
  Bench bench("vlp16", {3, 1});
  const std::size_t beam = 20;
  const Eigen::Vector3d d = bench.direction(beam);
  bench.set(beam, 0, 0, d * 10, -d, kTenPercent, 0, 1);  // weak near (centre ray)
  bench.set(beam, 1, 0, d * 20, -d, kRetro, 0, 2);       // retroreflector on a ring ray
  bench.set(beam, 2, 0, d * 40, -d, kConcrete, 0, 3);    // far wall
  auto s = bench.settings(PhysicsMode::kIdeal);
  const auto ids = [&](ReturnMode mode) {
    s.return_mode = mode;
    const auto out = bench.run(s);
    return std::array<std::uint32_t, 3>{out.object_id[out.slot(beam, 0)],
                                        out.object_id[out.slot(beam, 1)],
                                        out.object_id[out.slot(beam, 2)]};
  };
  CHECK(ids(ReturnMode::kStrongest) == std::array<std::uint32_t, 3>{2, 0, 0});
  CHECK(ids(ReturnMode::kFirst) == std::array<std::uint32_t, 3>{1, 0, 0});
  CHECK(ids(ReturnMode::kLast) == std::array<std::uint32_t, 3>{3, 0, 0});
  CHECK(ids(ReturnMode::kDual) == std::array<std::uint32_t, 3>{2, 3, 0});
  CHECK(ids(ReturnMode::kTriple)[0] == 2);
  CHECK(ids(ReturnMode::kTriple)[1] == 3);
  CHECK(ids(ReturnMode::kTriple)[2] == 1);
  // Hesai's first + last (QT64) and first + strongest (XT32M2X): plane 0 the first or the
  // strongest, plane 1 the other.
  CHECK(ids(ReturnMode::kFirstLast) == std::array<std::uint32_t, 3>{1, 3, 0});
  CHECK(ids(ReturnMode::kFirstStrongest) == std::array<std::uint32_t, 3>{2, 1, 0});
}

TEST_CASE("8: first + last and first + strongest report one echo once", "[physics][echoes]") {
  Bench bench("vlp16", {3, 1});
  const std::size_t beam = 20;
  const Eigen::Vector3d d = bench.direction(beam);
  auto s = bench.settings(PhysicsMode::kIdeal);
  const auto ids = [&](ReturnMode mode) {
    s.return_mode = mode;
    const auto out = bench.run(s);
    return std::array<std::uint32_t, 2>{out.object_id[out.slot(beam, 0)],
                                        out.object_id[out.slot(beam, 1)]};
  };
  // One wall: the first, the last and the strongest are the same echo, reported once.
  bench.set(beam, 0, 0, d * 30, -d, kConcrete, 0, 7);
  CHECK(ids(ReturnMode::kFirstLast) == std::array<std::uint32_t, 2>{7, 0});
  CHECK(ids(ReturnMode::kFirstStrongest) == std::array<std::uint32_t, 2>{7, 0});
  // A bright near target before a dim far one: the first is the strongest (reported once), the
  // last the far one.
  bench.set(beam, 0, 0, d * 10, -d, kRetro, 0, 1);
  bench.set(beam, 1, 0, d * 40, -d, kTenPercent, 0, 2);
  CHECK(ids(ReturnMode::kFirstLast) == std::array<std::uint32_t, 2>{1, 2});
  CHECK(ids(ReturnMode::kFirstStrongest) == std::array<std::uint32_t, 2>{1, 0});
}
