#include "app/cli.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace floe::app {
namespace {

command_line parse(std::initializer_list<const char*> args) {
    std::vector<const char*> argv{"floe"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_command_line(int(argv.size()), argv.data());
}

constexpr std::string_view known[] = {"serve", "config", "version"};

TEST(NearestCommand, SuggestsTyposAndPrefixes) {
    EXPECT_EQ(nearest_command("serv", known), "serve");
    EXPECT_EQ(nearest_command("srve", known), "serve");
    EXPECT_EQ(nearest_command("sevre", known), "serve");
    EXPECT_EQ(nearest_command("confg", known), "config");
    EXPECT_EQ(nearest_command("versoin", known), "version");
    EXPECT_EQ(nearest_command("ver", known), "version");
    EXPECT_EQ(nearest_command("SERVE", known), std::nullopt); // five edits: not a typo
}

TEST(NearestCommand, StaysQuietForUnrelatedWords) {
    EXPECT_EQ(nearest_command("", known), std::nullopt);
    EXPECT_EQ(nearest_command("x", known), std::nullopt);
    EXPECT_EQ(nearest_command("help", known), std::nullopt);
    EXPECT_EQ(nearest_command("produce", known), std::nullopt);
}

TEST(CommandLine, MistypedCommandIsAUsageError) {
    auto cl = parse({"serv"});
    EXPECT_EQ(cl.exit_code, 2);
    cl = parse({"--set", "floe.namespace=x", "confi"});
    EXPECT_EQ(cl.exit_code, 2);
}

TEST(CommandLine, SetAfterTheCommand) {
    auto cl = parse({"serve", "--set", "a=1", "--set", "b=2", "--config", "f.yaml"});
    ASSERT_FALSE(cl.exit_code);
    EXPECT_EQ(cl.command, "serve");
    EXPECT_EQ(cl.sets, (std::vector<std::string>{"a=1", "b=2"}));
    EXPECT_EQ(cl.config_path, "f.yaml");
}

TEST(CommandLine, SetAndConfigBeforeTheCommandApplyFirst) {
    auto cl = parse({"--set", "a=1", "--config", "g.yaml", "serve", "--set", "a=2"});
    ASSERT_FALSE(cl.exit_code);
    EXPECT_EQ(cl.command, "serve");
    // Both kept, in order: the one after the command name comes later and wins.
    EXPECT_EQ(cl.sets, (std::vector<std::string>{"a=1", "a=2"}));
    EXPECT_EQ(cl.config_path, "g.yaml");

    cl = parse({"--set", "floe.namespace=x", "config"});
    ASSERT_FALSE(cl.exit_code);
    EXPECT_EQ(cl.command, "config");
    EXPECT_EQ(cl.sets, (std::vector<std::string>{"floe.namespace=x"}));
}

TEST(CommandLine, LogOptionsComeFirst) {
    auto cl = parse({"--log-format", "json", "--set", "floe.log.format=text", "serve"});
    ASSERT_FALSE(cl.exit_code);
    EXPECT_EQ(cl.sets, (std::vector<std::string>{"floe.log.format=json", "floe.log.format=text"}));
}

TEST(CommandLine, TwoDifferentConfigFilesAreAUsageError) {
    EXPECT_EQ(parse({"--config", "a.yaml", "serve", "--config", "b.yaml"}).exit_code, 2);
    EXPECT_FALSE(parse({"--config", "a.yaml", "serve", "--config", "a.yaml"}).exit_code);
}

TEST(CommandLine, MissingCommandIsAUsageError) {
    EXPECT_EQ(parse({"--set", "a=1"}).exit_code, 2);
    EXPECT_EQ(parse({}).exit_code, 2);
}

} // namespace
} // namespace floe::app
