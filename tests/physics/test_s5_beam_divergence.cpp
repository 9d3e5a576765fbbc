// PHYSICS.md 5: several rays per beam (geometry and the detector's merging).
#include "physics_bench.hpp"

using namespace lidaremu;
using namespace lidaremu::core;
using namespace lidaremu::test;

TEST_CASE("5: several rays per beam merge, and mixed pixels give two echoes",
          "[physics][divergence]") {
  SECTION("a beam wholly on one wall returns what a single ray does") {
    Bench one("vlp16");
    Bench five("vlp16", {5, 1});
    one.target_facing_every_beam(20, kConcrete);
    for (std::size_t b = 0; b < five.beams(); ++b) {
      const Eigen::Vector3d d = five.direction(b);
      for (int r = 0; r < 5; ++r) five.set(b, r, 0, d * 20, -d, kConcrete);
    }
    const auto a = one.run(one.settings(PhysicsMode::kIdeal));
    const auto b = five.run(five.settings(PhysicsMode::kIdeal));
    CHECK(b.power_w[10] == Approx(a.power_w[10]).epsilon(1e-6));
    CHECK(b.range_m[10] == a.range_m[10]);
  }
  SECTION(
      "Ouster: a beam whose centre ray missed reports the ring ray's hit in the format's "
      "range convention") {
    Bench bench("os1-64", {3, 1});
    const std::size_t beam = 300 * 64 + 20;
    const Eigen::Vector3d d = bench.direction(beam);
    bench.set(beam, 1, 0, d * 12.0, -d, kConcrete);  // ray 0 (centre) hit nothing
    const auto out = bench.run(bench.settings(PhysicsMode::kIdeal));
    const double expected = BeamGeometry(bench.pattern()).reported_range(d * 12.0, 300, 20);
    CHECK(out.range_m[beam] == Approx(expected).margin(0.0006));
    CHECK(std::fabs(expected - 12.0) > 0.002);  // the convention differs from |p| here
  }
  SECTION("returns closer than the range resolution merge into one, powers add") {
    Bench bench("vlp16", {2, 1});
    const Eigen::Vector3d d = bench.direction(10);
    bench.set(10, 0, 0, d * 20.00, -d, kConcrete);
    bench.set(10, 1, 0, d * 20.05, -d, kConcrete);
    auto s = bench.settings(PhysicsMode::kIdeal);
    s.return_mode = ReturnMode::kDual;
    const auto out = bench.run(s);
    CHECK(out.range_m[out.slot(10, 0)] == Approx(20.0).margin(0.002));
    CHECK(out.range_m[out.slot(10, 1)] == 0);  // one return, not two
  }
  SECTION("two candidates merge or stay apart by range, whichever ray is nearer") {
    // The detector sorts a beam's candidates by range before merging: the merged return takes
    // the leading edge's range and the stronger (centre) ray's identity, in either order.
    const auto run_pair = [](double centre_m, double ring_m, ReturnMode mode) {
      Bench bench("vlp16", {2, 1});
      const Eigen::Vector3d d = bench.direction(10);
      bench.set(10, 0, 0, d * centre_m, -d, kConcrete, 0, 7);
      bench.set(10, 1, 0, d * ring_m, -d, kConcrete, 0, 9);
      auto s = bench.settings(PhysicsMode::kIdeal);
      s.return_mode = mode;
      return bench.run(s);
    };
    const auto centre_nearer = run_pair(20.00, 20.05, ReturnMode::kDual);
    const auto ring_nearer = run_pair(20.05, 20.00, ReturnMode::kDual);
    for (const auto* out : {&centre_nearer, &ring_nearer}) {
      CHECK(out->range_m[out->slot(10, 0)] == Approx(20.0).margin(0.002));
      CHECK(out->range_m[out->slot(10, 1)] == 0);
      CHECK(out->object_id[out->slot(10, 0)] == 7);
    }
    // Both rays' powers, each by its own range (the centre ray, 88 % of the beam, 0.25 % further
    // in one: 0.4 % less power).
    CHECK(ring_nearer.power_w[ring_nearer.slot(10, 0)] ==
          Approx(centre_nearer.power_w[centre_nearer.slot(10, 0)]).epsilon(0.01));
    // Apart: the last return is the far one, whichever slot it came in.
    for (const auto& [centre_m, ring_m] : {std::pair{10.0, 30.0}, std::pair{30.0, 10.0}}) {
      const auto last = run_pair(centre_m, ring_m, ReturnMode::kLast);
      CHECK(last.range_m[10] == Approx(30).margin(0.01));
      CHECK(last.object_id[10] == (centre_m > ring_m ? 7u : 9u));
    }
  }
  SECTION("an object edge: near object in the centre, far wall on two ring rays") {
    Bench bench("vlp16", {5, 1});
    const std::size_t beam = 10;
    const Eigen::Vector3d d = bench.direction(beam);
    for (int r : {0, 3, 4}) bench.set(beam, r, 0, d * 10, -d, kConcrete, 0, 7);
    for (int r : {1, 2}) bench.set(beam, r, 0, d * 30, -d, kConcrete, 0, 9);
    auto s = bench.settings();
    s.return_mode = ReturnMode::kDual;
    const auto dual = bench.run(s);
    CHECK(dual.range_m[dual.slot(beam, 0)] == Approx(10).margin(0.1));  // strongest: the object
    CHECK(dual.object_id[dual.slot(beam, 0)] == 7);
    CHECK(dual.range_m[dual.slot(beam, 1)] == Approx(30).margin(0.1));  // last: the wall
    CHECK(dual.object_id[dual.slot(beam, 1)] == 9);
    s.return_mode = ReturnMode::kLast;
    CHECK(bench.run(s).range_m[beam] == Approx(30).margin(0.1));
    s.return_mode = ReturnMode::kStrongest;
    CHECK(bench.run(s).range_m[beam] == Approx(10).margin(0.1));
  }
}
