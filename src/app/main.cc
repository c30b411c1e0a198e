#include "app/cli.h"

int main(int argc, char** argv) { return floe::app::run_cli(argc, argv); }
