// lidaremu for Unreal Engine 5: a scene component that traces the emulated sensor's beams with
// LineTraceSingleByChannel, reads each hit's normal and physical material, and streams the hits
// to lidaremud. Beams, units and axes (centimetres, left-handed, z up), timing and batching come
// from liblidaremu_client.so (tested in the lidaremu repository); this component only traces.
#pragma once

#include "Components/SceneComponent.h"
#include "CoreMinimal.h"
#include "LidaremuLidarComponent.generated.h"

struct lidaremu_rig;
class UPhysicalMaterial;

UCLASS(ClassGroup = (Sensors), meta = (BlueprintSpawnableComponent))
class LIDAREMU_API ULidaremuLidarComponent : public USceneComponent
{
	GENERATED_BODY()

public:
	ULidaremuLidarComponent();

	/** lidaremud --model name: vlp16, vlp32c, hdl32e, hdl64e, vls128, os1-64, ... */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	FString Model = TEXT("vlp16");
	/** Ouster lidar mode, e.g. 1024x10 (empty: the model's default). */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	FString Mode;
	/** Velodyne rotation rate (0: the model's default). */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	int32 Rpm = 0;
	/** Where lidaremud listens for hits. */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	FString Daemon = TEXT("udp://127.0.0.1:9870");
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	int32 SensorId = 0;
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	float MaxRangeCm = 12000.f;
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	TEnumAsByte<ECollisionChannel> TraceChannel = ECC_Visibility;
	/** Physical materials to lidaremud material ids (config/materials.toml: 6 asphalt, 8 concrete,
	 *  2 metal, 4 glass, 1 retroreflector, ...). */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	TMap<TObjectPtr<UPhysicalMaterial>, int32> Materials;
	/** Surface types to material ids, for physical materials not listed above. */
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	TMap<TEnumAsByte<EPhysicalSurface>, int32> SurfaceMaterials;
	UPROPERTY(EditAnywhere, Category = "lidaremu")
	int32 DefaultMaterial = 8;

protected:
	virtual void BeginPlay() override;
	virtual void EndPlay(const EEndPlayReason::Type Reason) override;
	virtual void TickComponent(float DeltaTime, ELevelTick TickType,
	                           FActorComponentTickFunction* ThisTickFunction) override;

private:
	uint16 MaterialFor(const FHitResult& Hit) const;

	lidaremu_rig* Rig = nullptr;
	uint16 Channels = 0;
};
