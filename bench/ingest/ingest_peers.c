/* Peers for bench/ingest/run.sh, and the loaders that fill the sources:
 *   ingest_peers kafka-consume BROKER TOPIC N   -> librdkafka consumer, partition 0 from the
 *                                                 beginning until N records: "records secs rate
 *                                                 end" (secs from the consumer's creation; end:
 *                                                 wall clock at the Nth record, so the harness
 *                                                 can time it from the process's start)
 *                                                 (PEER_SUBSCRIBE=1: joins a group instead, as
 *                                                 Floe's source does; PEER_FLOE_QUEUE=1: the
 *                                                 prefetch queue settings Floe's source uses)
 *   ingest_peers nats-publish URL SUBJECT N SIZE -> N messages of SIZE bytes, async JetStream
 *                                                 publish, all acks awaited
 *   ingest_peers nats-consume URL STREAM SUBJECT N -> ephemeral pull consumer from sequence 1,
 *                                                 fetches of 512 (500 ms timeout), AckAll on the
 *                                                 last of each fetch (as Floe's source does),
 *                                                 until N messages: "records secs rate end"
 *                                                 (PEER_FETCH=K: fetches of K instead)
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

static int kafka_consume(const char* broker, const char* topic, long n) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", broker, err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "group.id", "floe-bench-peer", err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "enable.partition.eof", "false", err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "conf: %s\n", err);
        return 1;
    }
    if (getenv("PEER_FLOE_QUEUE") &&
        (rd_kafka_conf_set(conf, "queued.min.messages", "1000000", err, sizeof err) != RD_KAFKA_CONF_OK ||
         rd_kafka_conf_set(conf, "queued.max.messages.kbytes", "262144", err, sizeof err) != RD_KAFKA_CONF_OK)) {
        fprintf(stderr, "conf: %s\n", err);
        return 1;
    }
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "consumer: %s\n", err);
        return 1;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
    if (getenv("PEER_SUBSCRIBE")) {
        rd_kafka_topic_partition_list_add(l, topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_subscribe(rk, l);
    } else {
        rd_kafka_topic_partition_list_add(l, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, l);
    }
    rd_kafka_topic_partition_list_destroy(l);
    long got = 0;
    double t0 = now_s(), idle = now_s();
    while (got < n && now_s() - idle < 30) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
        if (!m) continue;
        if (!m->err) {
            ++got;
            idle = now_s();
        }
        rd_kafka_message_destroy(m);
    }
    double secs = now_s() - t0;
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    printf("%ld %.3f %.0f %.3f\n", got, secs, (double)got / secs, (double)end.tv_sec + (double)end.tv_nsec / 1e9);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return got == n ? 0 : 1;
}

static int nats_publish(jsCtx* js, const char* subject, long n, int size) {
    char* buf = malloc((size_t)size);
    for (int i = 0; i < size; ++i) buf[i] = (char)('a' + i % 26);
    for (long i = 0; i < n; ++i) {
        natsStatus s = js_PublishAsync(js, subject, buf, size, NULL);
        if (s != NATS_OK) {
            fprintf(stderr, "publish %ld: %s\n", i, natsStatus_GetText(s));
            free(buf);
            return 1;
        }
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 60000;
    natsStatus s = js_PublishAsyncComplete(js, &po);
    free(buf);
    if (s != NATS_OK) {
        fprintf(stderr, "publish complete: %s\n", natsStatus_GetText(s));
        return 1;
    }
    return 0;
}

static int nats_consume(jsCtx* js, const char* stream, const char* subject, long n) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream;
    so.Config.AckPolicy = js_AckAll;
    so.Config.MaxAckPending = 20000;
    so.Config.DeliverPolicy = js_DeliverAll;
    natsSubscription* sub = NULL;
    jsErrCode ec = 0;
    natsStatus s = js_PullSubscribe(&sub, js, subject, NULL, NULL, &so, &ec);
    if (s != NATS_OK) {
        fprintf(stderr, "pull subscribe: %s (%d)\n", natsStatus_GetText(s), (int)ec);
        return 1;
    }
    long got = 0;
    const int batch = getenv("PEER_FETCH") ? atoi(getenv("PEER_FETCH")) : 512;
    double t0 = now_s(), idle = now_s();
    while (got < n && now_s() - idle < 30) {
        natsMsgList list = {0};
        s = natsSubscription_Fetch(&list, sub, batch, 500, &ec);
        if (s == NATS_OK) {
            got += list.Count;
            if (list.Count > 0) natsMsg_Ack(list.Msgs[list.Count - 1], NULL);
            idle = now_s();
        }
        natsMsgList_Destroy(&list);
    }
    double secs = now_s() - t0;
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    printf("%ld %.3f %.0f %.3f\n", got, secs, (double)got / secs, (double)end.tv_sec + (double)end.tv_nsec / 1e9);
    natsSubscription_Destroy(sub);
    return got >= n ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc >= 5 && strcmp(argv[1], "kafka-consume") == 0) return kafka_consume(argv[2], argv[3], atol(argv[4]));
    if (argc < 5) {
        fprintf(stderr, "usage: see the comment at the top of ingest_peers.c\n");
        return 2;
    }
    natsConnection* nc = NULL;
    jsCtx* js = NULL;
    natsStatus s = natsConnection_ConnectTo(&nc, argv[2]);
    if (s == NATS_OK) s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK) {
        fprintf(stderr, "connect %s: %s\n", argv[2], natsStatus_GetText(s));
        return 1;
    }
    int rc = 2;
    if (strcmp(argv[1], "nats-publish") == 0 && argc >= 6) rc = nats_publish(js, argv[3], atol(argv[4]), atoi(argv[5]));
    else if (strcmp(argv[1], "nats-consume") == 0 && argc >= 6) rc = nats_consume(js, argv[3], argv[4], atol(argv[5]));
    else fprintf(stderr, "bad command\n");
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return rc;
}
