// Links liblidaremu_client.so (the C ABI). Set LIDAREMU_ROOT to a built lidaremu checkout, or copy
// clients/capi/include and build/clients/capi/liblidaremu_client.so* into ThirdParty/lidaremu.
using System;
using System.IO;
using UnrealBuildTool;

public class Lidaremu : ModuleRules
{
    public Lidaremu(ReadOnlyTargetRules Target) : base(Target)
    {
        PCHUsage = PCHUsageMode.UseExplicitOrSharedPCHs;
        PublicDependencyModuleNames.AddRange(new[] { "Core", "CoreUObject", "Engine", "PhysicsCore" });

        string Root = Environment.GetEnvironmentVariable("LIDAREMU_ROOT") ??
                      Path.Combine(PluginDirectory, "ThirdParty", "lidaremu");
        string Include = Directory.Exists(Path.Combine(Root, "clients", "capi", "include"))
            ? Path.Combine(Root, "clients", "capi", "include") : Path.Combine(Root, "include");
        string Library = File.Exists(Path.Combine(Root, "build", "clients", "capi", "liblidaremu_client.so"))
            ? Path.Combine(Root, "build", "clients", "capi", "liblidaremu_client.so")
            : Path.Combine(Root, "lib", "liblidaremu_client.so");
        PublicIncludePaths.Add(Include);
        PublicAdditionalLibraries.Add(Library);
        RuntimeDependencies.Add(Library);
    }
}
