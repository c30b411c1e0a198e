/* Produce throughput of a librdkafka producer: idempotent (the peer) against transactional with
 * a commit every 100, 1,000 and 10,000 records; the same N records of 100 bytes to one
 * partition in each run, acks=all. Usage: floe-bench-txn BROKER N */
#include <librdkafka/rdkafka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char* what, const char* msg) {
    fprintf(stderr, "floe-bench-txn: %s: %s\n", what, msg);
    exit(1);
}

static void check(const char* what, rd_kafka_error_t* e) {
    if (e) die(what, rd_kafka_error_string(e));
}

static long delivered_ok, delivered_err;
static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
    (void)rk;
    (void)opaque;
    if (m->err) ++delivered_err;
    else ++delivered_ok;
}

/* commit_every 0: idempotent producer without transactions. Returns records/s. */
static double run(const char* broker, const char* topic, long n, long commit_every) {
    char err[512], txn_id[64];
    rd_kafka_conf_t* c = rd_kafka_conf_new();
    snprintf(txn_id, sizeof txn_id, "bench-%s", topic);
    if (rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof err)
        || rd_kafka_conf_set(c, "enable.idempotence", "true", err, sizeof err)
        || rd_kafka_conf_set(c, "linger.ms", "5", err, sizeof err)
        || rd_kafka_conf_set(c, "batch.num.messages", "10000", err, sizeof err)
        || (commit_every > 0 && rd_kafka_conf_set(c, "transactional.id", txn_id, err, sizeof err)))
        die("config", err);
    rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
    rd_kafka_t* p = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!p) die("producer", err);
    if (commit_every > 0) check("init_transactions", rd_kafka_init_transactions(p, 30000));
    char value[100];
    memset(value, 'v', sizeof value);
    delivered_ok = delivered_err = 0;
    double t0 = now_s();
    for (long i = 0; i < n; ++i) {
        if (commit_every > 0 && i % commit_every == 0) check("begin", rd_kafka_begin_transaction(p));
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                                      RD_KAFKA_V_VALUE(value, sizeof value),
                                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(p, 10);
                continue;
            }
            if (e) die("produce", rd_kafka_err2str(e));
            break;
        }
        rd_kafka_poll(p, 0);
        if (commit_every > 0 && (i + 1) % commit_every == 0) check("commit", rd_kafka_commit_transaction(p, 30000));
    }
    if (commit_every > 0 && n % commit_every != 0) check("commit", rd_kafka_commit_transaction(p, 30000));
    rd_kafka_flush(p, 60000);
    double secs = now_s() - t0;
    rd_kafka_destroy(p);
    if (delivered_ok != n || delivered_err != 0) die("delivery", "not every record was acknowledged");
    return (double)n / secs;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: floe-bench-txn BROKER N\n");
        return 2;
    }
    long n = atol(argv[2]);
    double idem = run(argv[1], "bench-idempotent", n, 0);
    double t1k = run(argv[1], "bench-txn-1000", n, 1000);
    double t10k = run(argv[1], "bench-txn-10000", n, 10000);
    double t100 = run(argv[1], "bench-txn-100", n, 100);
    printf("| producer | records/s | vs idempotent |\n|---|---|---|\n");
    printf("| idempotent (peer) | %.0f | 1.00 |\n", idem);
    printf("| transactional, commit every 1,000 | %.0f | %.2f |\n", t1k, t1k / idem);
    printf("| transactional, commit every 10,000 | %.0f | %.2f |\n", t10k, t10k / idem);
    printf("| transactional, commit every 100 | %.0f | %.2f |\n", t100, t100 / idem);
    return 0;
}
