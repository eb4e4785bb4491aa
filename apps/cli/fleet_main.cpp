// ckptscope-fleet: the fleet analyses (`ckptscope fleet ...` runs this).
// A program of its own so that libcurl, which the Prometheus client needs,
// is never loaded by `ckptscope run` (its dynamic linking costs every job's
// start-up a few ms), as ckptscope-notify keeps it out for --notify.
#include <CLI/CLI.hpp>

#include "apps/cli/command_registry.h"

int main(int argc, char** argv) {
  using namespace ckpt::cli;
  CLI::App app{
      "ckptscope fleet: fleet analyses from Prometheus and scheduler records "
      "(docs/fleet.md)"};
  app.name("ckptscope fleet");
  app.set_version_flag("--version", CKPTSCOPE_VERSION);
  app.require_subcommand(1);
  CommandList registered;
  add_fleet_record_commands(app, registered);
  add_fleet_attribute_command(app, registered);
  add_fleet_checkpoints_command(app, registered);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (const auto* chosen = chosen_command(registered)) return chosen->run();
  return 2;
}
