#include "LidaremuLidarComponent.h"

#include "CollisionQueryParams.h"
#include "Engine/World.h"
#include "PhysicalMaterials/PhysicalMaterial.h"
#include "lidaremu_client.h"

ULidaremuLidarComponent::ULidaremuLidarComponent()
{
	PrimaryComponentTick.bCanEverTick = true;
	// After physics: the traces see this frame's positions.
	PrimaryComponentTick.TickGroup = TG_PostPhysics;
}

void ULidaremuLidarComponent::BeginPlay()
{
	Super::BeginPlay();
	char Error[512] = {0};
	Rig = lidaremu_rig_create(TCHAR_TO_UTF8(*Model), Rpm, TCHAR_TO_UTF8(*Mode), "unreal",
	                          TCHAR_TO_UTF8(*Daemon), static_cast<uint16_t>(SensorId), Error,
	                          sizeof Error);
	if (!Rig)
	{
		UE_LOG(LogTemp, Error, TEXT("lidaremu: %s"), UTF8_TO_TCHAR(Error));
		SetComponentTickEnabled(false);
		return;
	}
	Channels = lidaremu_rig_channels(Rig);
}

void ULidaremuLidarComponent::EndPlay(const EEndPlayReason::Type Reason)
{
	lidaremu_rig_destroy(Rig);
	Rig = nullptr;
	Super::EndPlay(Reason);
}

uint16 ULidaremuLidarComponent::MaterialFor(const FHitResult& Hit) const
{
	const UPhysicalMaterial* Physical = Hit.PhysMaterial.Get();
	if (Physical)
	{
		if (const int32* Id = Materials.Find(const_cast<UPhysicalMaterial*>(Physical)))
			return static_cast<uint16>(*Id);
		if (const int32* Id = SurfaceMaterials.Find(Physical->SurfaceType))
			return static_cast<uint16>(*Id);
	}
	return static_cast<uint16>(DefaultMaterial);
}

void ULidaremuLidarComponent::TickComponent(float DeltaTime, ELevelTick TickType,
                                            FActorComponentTickFunction* ThisTickFunction)
{
	Super::TickComponent(DeltaTime, TickType, ThisTickFunction);
	const FTransform Pose = GetComponentTransform();
	const FVector P = Pose.GetLocation();
	const FQuat Q = Pose.GetRotation();
	const double Position[3] = {P.X, P.Y, P.Z};
	const double Orientation[4] = {Q.X, Q.Y, Q.Z, Q.W};
	lidaremu_rig_set_pose(Rig, Position, Orientation);

	// The library slices the rotation this tick swept, and starts the next frame when one is
	// complete.
	lidaremu_rig_tick(Rig, DeltaTime);
	FCollisionQueryParams Params(SCENE_QUERY_STAT(Lidaremu), /*bTraceComplex=*/true, GetOwner());
	Params.bReturnPhysicalMaterial = true;
	uint32_t First = 0, Count = 0;
	while (lidaremu_rig_next_slice(Rig, &First, &Count) == 1)
	{
		for (uint32 C = First; C < First + Count; ++C)
		{
			for (uint16 K = 0; K < Channels; ++K)
			{
				double Start[3], Direction[3];
				lidaremu_rig_ray(Rig, C, K, Start, Direction);
				const FVector From(Start[0], Start[1], Start[2]);
				const FVector To =
				    From + FVector(Direction[0], Direction[1], Direction[2]) * MaxRangeCm;
				FHitResult Hit;
				if (!GetWorld()->LineTraceSingleByChannel(Hit, From, To, TraceChannel, Params))
					continue;
				const double Point[3] = {Hit.ImpactPoint.X, Hit.ImpactPoint.Y, Hit.ImpactPoint.Z};
				const double Normal[3] = {Hit.ImpactNormal.X, Hit.ImpactNormal.Y,
				                          Hit.ImpactNormal.Z};
				// The hit actor's unique id is the ground-truth object id of the live view.
				const AActor* Actor = Hit.GetActor();
				lidaremu_rig_set_hit(Rig, C, K, Point, Normal, MaterialFor(Hit),
				                     Actor ? Actor->GetUniqueID() : 0);
			}
		}
		if (lidaremu_rig_send_slice(Rig) != LIDAREMU_OK)
			UE_LOG(LogTemp, Warning, TEXT("lidaremu: %s"), UTF8_TO_TCHAR(lidaremu_rig_last_error(Rig)));
	}
}
