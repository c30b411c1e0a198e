/* Bare publishers for bench/restore/run.sh: what `floe restore` does on the wire without the
 * table behind it, each message with the same two headers a restore adds:
 *   restore_peers nats-publish URL SUBJECT N SIZE  -> N async JetStream publishes of SIZE bytes
 *                     (4,096 in flight, as floe restore), headers Nats-Msg-Id (unique) and
 *                     Floe-Original-Timestamp; all acks awaited: "messages secs rate"
 *   restore_peers kafka-produce BROKER TOPIC N SIZE -> N records of SIZE bytes, key 16 bytes,
 *                     header Floe-Restore-Id, idempotent producer, acks=all, linger.ms=5 (as
 *                     floe restore), partition 0; all delivered: "records secs rate"
 * Exit status 0 on success; errors on stderr. */
#include <librdkafka/rdkafka.h>
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int nats_publish(const char* url, const char* subject, long n, int size) {
    natsConnection* nc = NULL;
    jsCtx* js = NULL;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = 4096;
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, &jo);
    if (s != NATS_OK) {
        fprintf(stderr, "connect %s: %s\n", url, natsStatus_GetText(s));
        return 1;
    }
    char* buf = malloc((size_t)size);
    for (int i = 0; i < size; ++i) buf[i] = (char)('a' + i % 26);
    char id[64], ts[32];
    double t0 = now_s();
    for (long i = 0; i < n; ++i) {
        natsMsg* m = NULL;
        natsMsg_Create(&m, subject, NULL, buf, size);
        snprintf(id, sizeof id, "peer:%ld", i);
        snprintf(ts, sizeof ts, "%ld", 1796270400000L + i);
        natsMsgHeader_Set(m, "Nats-Msg-Id", id);
        natsMsgHeader_Set(m, "Floe-Original-Timestamp", ts);
        s = js_PublishMsgAsync(js, &m, NULL);
        if (m) natsMsg_Destroy(m);
        if (s != NATS_OK) {
            fprintf(stderr, "publish %ld: %s\n", i, natsStatus_GetText(s));
            return 1;
        }
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    s = js_PublishAsyncComplete(js, &po);
    double secs = now_s() - t0;
    free(buf);
    if (s != NATS_OK) {
        fprintf(stderr, "publish complete: %s\n", natsStatus_GetText(s));
        return 1;
    }
    printf("%ld %.3f %.0f\n", n, secs, (double)n / secs);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

static long delivered, failed;
static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
    if (m->err) ++failed;
    else ++delivered;
}

static int kafka_produce(const char* broker, const char* topic, long n, int size) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", broker, err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "acks", "all", err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "linger.ms", "5", err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "conf: %s\n", err);
        return 1;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "producer: %s\n", err);
        return 1;
    }
    char* buf = malloc((size_t)size);
    for (int i = 0; i < size; ++i) buf[i] = (char)('a' + i % 26);
    char key[32], id[64];
    double t0 = now_s();
    for (long i = 0; i < n; ++i) {
        snprintf(key, sizeof key, "orders.%010ld", i);
        snprintf(id, sizeof id, "peer:0:%ld", i);
        rd_kafka_headers_t* hs = rd_kafka_headers_new(1);
        rd_kafka_header_add(hs, "Floe-Restore-Id", -1, id, -1);
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_KEY(key, 16), RD_KAFKA_V_VALUE(buf, (size_t)size),
                RD_KAFKA_V_TIMESTAMP(1796270400000L + i), RD_KAFKA_V_HEADERS(hs), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                fprintf(stderr, "produce %ld: %s\n", i, rd_kafka_err2str(e));
                return 1;
            }
            rd_kafka_poll(rk, 50);
        }
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 60000);
    double secs = now_s() - t0;
    printf("%ld %.3f %.0f\n", delivered, secs, (double)delivered / secs);
    rd_kafka_destroy(rk);
    free(buf);
    return delivered == n && failed == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc >= 6 && strcmp(argv[1], "nats-publish") == 0) return nats_publish(argv[2], argv[3], atol(argv[4]), atoi(argv[5]));
    if (argc >= 6 && strcmp(argv[1], "kafka-produce") == 0) return kafka_produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]));
    fprintf(stderr, "usage: see the comment at the top of restore_peers.c\n");
    return 2;
}
