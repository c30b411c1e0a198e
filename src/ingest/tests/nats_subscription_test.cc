// subscription_graveyard against a real nats-server started here: a subscription flooded by
// another connection with 64 KiB messages is dropped and made again 1,000 times over 40
// connections (libnats 3.4.1's read loop is nearly always copying a message for it when it goes;
// with natsSubscription_Destroy in place of retire() this test died in 7 of 8 runs, mostly within
// a second, nats.c issue 637), and a subscription dropped while the server is down is kept until
// its connection is destroyed. Freed memory is filled (M_PERTURB) so that a read of a freed
// subscription crashes at once instead of finding its old contents.
#include "ingest/nats_subscription.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace floe::ingest {
namespace {

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        ::close(fd);
        return -1;
    }
    ::close(fd);
    return ntohs(a.sin_port);
}

// A nats-server child on loopback (core NATS only); killed by the destructor, or by the kernel
// when the test's main thread ends.
struct nats_server {
    int port = free_port();
    pid_t pid = -1;
    std::string url = "nats://127.0.0.1:" + std::to_string(port);

    bool start() {
        pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            const std::string p = std::to_string(port);
            ::execlp("nats-server", "nats-server", "-a", "127.0.0.1", "-p", p.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        for (int i = 0; i < 100; ++i) { // up to 5 s
            natsConnection* nc = nullptr;
            if (natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK) {
                natsConnection_Destroy(nc);
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
    void kill9() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
    ~nats_server() { kill9(); }
};

TEST(subscription_graveyard, drops_flooded_subscriptions_while_the_read_loop_delivers_to_them) {
    ::mallopt(M_PERTURB, 0xa5);
    nats_server srv;
    ASSERT_GT(srv.port, 0);
    ASSERT_TRUE(srv.start()) << "nats-server did not start";
    natsConnection* pub = nullptr;
    ASSERT_EQ(natsConnection_ConnectTo(&pub, srv.url.c_str()), NATS_OK);
    std::atomic<bool> stop{false};
    std::thread flood([&] {
        static char payload[64 * 1024] = {};
        while (!stop.load())
            for (int i = 0; i < 100 && !stop.load(); ++i)
                (void)natsConnection_Publish(pub, "flood", payload, int(sizeof payload));
    });
    constexpr int connections = 40, cycles = 25;
    int received = 0;
    for (int c = 0; c < connections; ++c) {
        natsConnection* nc = nullptr;
        ASSERT_EQ(natsConnection_ConnectTo(&nc, srv.url.c_str()), NATS_OK);
        subscription_graveyard graveyard;
        for (int i = 0; i < cycles; ++i) {
            natsSubscription* sub = nullptr;
            ASSERT_EQ(natsConnection_SubscribeSync(&sub, nc, "flood"), NATS_OK);
            natsMsg* m = nullptr;
            if (natsSubscription_NextMsg(&m, sub, 1000) == NATS_OK) {
                ++received;
                natsMsg_Destroy(m);
            }
            graveyard.retire(nc, sub);
            EXPECT_EQ(sub, nullptr);
        }
        EXPECT_EQ(graveyard.kept(), 0u) << "every round trip succeeded, so nothing is kept";
        natsConnection_Destroy(nc);
    }
    stop = true;
    flood.join();
    // Each subscription received while the flood went on, so the read loop was busy with it.
    EXPECT_GT(received, connections * cycles * 9 / 10);
    natsConnection_Destroy(pub);
}

TEST(subscription_graveyard, keeps_a_subscription_dropped_while_the_server_is_down_until_the_connection_goes) {
    nats_server srv;
    ASSERT_GT(srv.port, 0);
    ASSERT_TRUE(srv.start()) << "nats-server did not start";
    natsOptions* o = nullptr;
    ASSERT_EQ(natsOptions_Create(&o), NATS_OK);
    ASSERT_EQ(natsOptions_SetURL(o, srv.url.c_str()), NATS_OK);
    ASSERT_EQ(natsOptions_SetMaxReconnect(o, -1), NATS_OK);
    natsConnection* nc = nullptr;
    ASSERT_EQ(natsConnection_Connect(&nc, o), NATS_OK);
    natsOptions_Destroy(o);
    natsSubscription* sub = nullptr;
    ASSERT_EQ(natsConnection_SubscribeSync(&sub, nc, "x"), NATS_OK);
    srv.kill9();
    for (int i = 0; i < 100 && natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_NE(natsConnection_Status(nc), NATS_CONN_STATUS_CONNECTED);
    subscription_graveyard graveyard;
    graveyard.retire(nc, sub, 200);
    EXPECT_EQ(sub, nullptr);
    EXPECT_EQ(graveyard.kept(), 1u) << "no round trip, so the read loop may still hold it";
    natsConnection_Destroy(nc);
    graveyard.destroy_all();
    EXPECT_EQ(graveyard.kept(), 0u);
}

} // namespace
} // namespace floe::ingest
