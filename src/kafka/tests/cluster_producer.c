/* An idempotent librdkafka producer for tests/e2e/redis_cluster_test.sh: produces <count>
 * records (key = value = <prefix>-<i>) at about <rate> records/s with acks=all, and prints one
 * line per delivery report, so the test knows exactly which records were acknowledged:
 *
 *   ACK <partition> <offset> <value>
 *   NACK <value> <error>
 *   DONE <acked> <failed>
 *
 * usage: cluster_producer <bootstrap> <topic> <prefix> <count> <rate>
 */
#include <librdkafka/rdkafka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long acked = 0, failed = 0;

static void set(rd_kafka_conf_t* conf, const char* k, const char* v) {
    char err[512];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "config %s=%s: %s\n", k, v, err);
        exit(2);
    }
}

static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
    (void)rk;
    (void)opaque;
    if (m->err) {
        printf("NACK %.*s %s\n", (int)m->len, (const char*)m->payload, rd_kafka_err2name(m->err));
        ++failed;
    } else {
        printf("ACK %d %lld %.*s\n", m->partition, (long long)m->offset, (int)m->len, (const char*)m->payload);
        ++acked;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s bootstrap topic prefix count rate\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    long count = atol(argv[4]);
    double rate = atof(argv[5]);
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", argv[1]);
    set(conf, "enable.idempotence", "true");
    set(conf, "acks", "all");
    set(conf, "linger.ms", "5");
    set(conf, "message.timeout.ms", "60000");
    set(conf, "topic.metadata.refresh.interval.ms", "1000");
    if (getenv("CLUSTER_PRODUCER_DEBUG")) set(conf, "debug", getenv("CLUSTER_PRODUCER_DEBUG"));
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    char err[512];
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "rd_kafka_new: %s\n", err);
        return 2;
    }
    double start = now_s();
    char value[256];
    for (long i = 0; i < count; ++i) {
        /* Paced: the test kills a broker while this runs. */
        while (rate > 0 && (now_s() - start) * rate < (double)i) rd_kafka_poll(rk, 1);
        int n = snprintf(value, sizeof value, "%s-%ld", argv[3], i);
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(argv[2]), RD_KAFKA_V_KEY(value, (size_t)n),
                                                      RD_KAFKA_V_VALUE(value, (size_t)n),
                                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(rk, 10);
                continue;
            }
            if (e) {
                printf("NACK %s %s\n", value, rd_kafka_err2name(e));
                ++failed;
            }
            break;
        }
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 90 * 1000);
    if (rd_kafka_outq_len(rk) > 0) fprintf(stderr, "%d message(s) still queued\n", rd_kafka_outq_len(rk));
    printf("DONE %ld %ld %.3f\n", acked, failed, now_s() - start);
    rd_kafka_destroy(rk);
    return 0;
}
