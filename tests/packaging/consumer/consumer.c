/* Links against the installed liblidaremu_client and builds a rig for a VLP-16: what an engine
 * plugin does first. Prints the version and the rig's shape. */
#include <lidaremu_client.h>
#include <stdio.h>

int main(void) {
  char error[256] = {0};
  lidaremu_rig* rig =
      lidaremu_rig_create("vlp16", 600, "", "ros", "udp://127.0.0.1:9", 0, error, sizeof error);
  if (!rig) {
    fprintf(stderr, "rig: %s\n", error);
    return 1;
  }
  printf("lidaremu %s: %u columns x %u channels\n", lidaremu_version(), lidaremu_rig_columns(rig),
         (unsigned)lidaremu_rig_channels(rig));
  lidaremu_rig_destroy(rig);
  return 0;
}
