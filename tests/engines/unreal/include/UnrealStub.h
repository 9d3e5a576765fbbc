// The part of Unreal Engine 5's API that clients/engines/unreal's component uses, written from
// Epic's API reference, so that the component's own source compiles and runs here without the
// engine: the world's line traces ask the scene the harness sets. Not an Unreal: just what the
// component touches, with the same names, types and units (centimetres, x forward, y right, z up).
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

using int32 = std::int32_t;
using uint16 = std::uint16_t;
using uint32 = std::uint32_t;
using TCHAR = char;

#define UCLASS(...)
#define UPROPERTY(...)
#define LIDAREMU_API
#define TEXT(x) x
#define TCHAR_TO_UTF8(x) (x)
#define UTF8_TO_TCHAR(x) (x)
#define SCENE_QUERY_STAT(name) #name
#define UE_LOG(category, verbosity, format, ...) \
  std::fprintf(stderr, "%s: " format "\n", #verbosity, __VA_ARGS__)
// UHT's generated body: the base class as Super.
#define GENERATED_BODY() \
 public:                 \
  using Super = USceneComponent;

class FString {
 public:
  FString() = default;
  FString(const char* text) : text_(text) {}  // NOLINT(google-explicit-constructor): as UE's
  const TCHAR* operator*() const { return text_.c_str(); }

 private:
  std::string text_;
};

struct FVector {
  double X = 0, Y = 0, Z = 0;
  FVector() = default;
  FVector(double x, double y, double z) : X(x), Y(y), Z(z) {}
  FVector operator+(const FVector& o) const { return {X + o.X, Y + o.Y, Z + o.Z}; }
  FVector operator-(const FVector& o) const { return {X - o.X, Y - o.Y, Z - o.Z}; }
  FVector operator*(double s) const { return {X * s, Y * s, Z * s}; }
};

struct FQuat {
  double X = 0, Y = 0, Z = 0, W = 1;
};

struct FTransform {
  FVector Location;
  FQuat Rotation;
  [[nodiscard]] FVector GetLocation() const { return Location; }
  [[nodiscard]] FQuat GetRotation() const { return Rotation; }
};

enum ECollisionChannel { ECC_WorldStatic, ECC_Visibility };
enum EPhysicalSurface { SurfaceType_Default, SurfaceType1, SurfaceType2 };
enum ETickingGroup { TG_PrePhysics, TG_PostPhysics };
enum ELevelTick { LEVELTICK_All };
namespace EEndPlayReason {
enum Type { Destroyed, EndPlayInEditor, Quit };
}

template <typename T>
class TEnumAsByte {
 public:
  TEnumAsByte(T value) : value_(value) {}  // NOLINT(google-explicit-constructor): as UE's
  operator T() const { return value_; }    // NOLINT(google-explicit-constructor)
  bool operator<(const TEnumAsByte& o) const { return value_ < o.value_; }

 private:
  T value_;
};

template <typename T>
using TObjectPtr = T*;

template <typename T>
class TWeakObjectPtr {
 public:
  TWeakObjectPtr(T* object = nullptr) : object_(object) {}  // NOLINT(google-explicit-constructor)
  T* Get() const { return object_; }

 private:
  T* object_;
};

template <typename K, typename V>
class TMap {
 public:
  void Add(const K& key, const V& value) { map_.insert_or_assign(key, value); }
  const V* Find(const K& key) const {
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  std::map<K, V> map_;
};

class UObject {
 public:
  virtual ~UObject() = default;
  [[nodiscard]] uint32 GetUniqueID() const { return unique_id_; }
  uint32 unique_id_ = 0;
};

class UPhysicalMaterial : public UObject {
 public:
  TEnumAsByte<EPhysicalSurface> SurfaceType = SurfaceType_Default;
};

class AActor : public UObject {};

struct FHitResult {
  FVector ImpactPoint, ImpactNormal;
  TWeakObjectPtr<UPhysicalMaterial> PhysMaterial;
  AActor* Actor = nullptr;
  [[nodiscard]] AActor* GetActor() const { return Actor; }
};

struct FCollisionQueryParams {
  FCollisionQueryParams(const char* /*stat*/, bool complex, const AActor* ignore)
      : bTraceComplex(complex), Ignored(ignore) {}
  bool bTraceComplex;
  bool bReturnPhysicalMaterial = false;
  const AActor* Ignored;
};

class UWorld {
 public:
  // The harness's scene: the first hit from `start` to `end`.
  std::function<bool(FHitResult&, const FVector&, const FVector&)> Scene;
  bool LineTraceSingleByChannel(FHitResult& hit, const FVector& start, const FVector& end,
                                ECollisionChannel /*channel*/,
                                const FCollisionQueryParams& params) const {
    hit = {};
    if (!Scene || !Scene(hit, start, end)) return false;
    if (!params.bReturnPhysicalMaterial) hit.PhysMaterial = nullptr;
    return true;
  }
};

struct FActorComponentTickFunction {
  bool bCanEverTick = false;
  ETickingGroup TickGroup = TG_PrePhysics;
};

class USceneComponent : public UObject {
 public:
  FActorComponentTickFunction PrimaryComponentTick;
  FTransform ComponentToWorld;
  UWorld* World = nullptr;
  AActor* Owner = nullptr;
  bool TickEnabled = true;

  virtual void BeginPlay() {}
  virtual void EndPlay(const EEndPlayReason::Type /*reason*/) {}
  virtual void TickComponent(float /*delta*/, ELevelTick /*type*/,
                             FActorComponentTickFunction* /*function*/) {}
  [[nodiscard]] const FTransform& GetComponentTransform() const { return ComponentToWorld; }
  [[nodiscard]] UWorld* GetWorld() const { return World; }
  [[nodiscard]] AActor* GetOwner() const { return Owner; }
  void SetComponentTickEnabled(bool enabled) { TickEnabled = enabled; }
};
