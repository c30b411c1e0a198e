/* A librdkafka transactional producer and consumer for the transactions e2e test.
 *
 *   txn_client produce BROKER TOPIC TXN_ID N    N transactions over partitions 0 and 1, 5 records
 *                                               each ("c-<i>-<p>-<j>" committed, every third
 *                                               "a-<i>-<p>-<j>" aborted); prints "committed K"
 *   txn_client consume BROKER TOPIC ISOLATION   reads partitions 0 and 1 from the beginning to
 *                                               their end (read_committed | read_uncommitted),
 *                                               prints each value on its own line
 *   txn_client zombie BROKER TOPIC TXN_ID       a second producer with the same transactional
 *                                               id fences the first: prints "fenced" when the
 *                                               first one's commit fails fatally, then commits
 *                                               "fresh-<id>" with the second
 * Exit status 0 on success; errors go to stderr. */
#include <librdkafka/rdkafka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char* what, const char* msg) {
    fprintf(stderr, "txn_client: %s: %s\n", what, msg);
    exit(1);
}

static void check(const char* what, rd_kafka_error_t* e) {
    if (!e) return;
    fprintf(stderr, "txn_client: %s: %s\n", what, rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    exit(1);
}

static rd_kafka_t* producer(const char* broker, const char* txn_id) {
    char err[512];
    rd_kafka_conf_t* c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof err)
        || rd_kafka_conf_set(c, "transactional.id", txn_id, err, sizeof err)
        || rd_kafka_conf_set(c, "transaction.timeout.ms", "20000", err, sizeof err)
        || rd_kafka_conf_set(c, "linger.ms", "5", err, sizeof err))
        die("config", err);
    rd_kafka_t* p = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!p) die("producer", err);
    check("init_transactions", rd_kafka_init_transactions(p, 20000));
    return p;
}

static void send_one(rd_kafka_t* p, const char* topic, int partition, const char* value) {
    rd_kafka_resp_err_t e = rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                                              RD_KAFKA_V_VALUE((void*)value, strlen(value)),
                                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (e) die("produce", rd_kafka_err2str(e));
}

static int produce(const char* broker, const char* topic, const char* txn_id, int n) {
    rd_kafka_t* p = producer(broker, txn_id);
    int committed = 0;
    char v[64];
    for (int i = 0; i < n; ++i) {
        int abort = i % 3 == 1;
        check("begin", rd_kafka_begin_transaction(p));
        for (int part = 0; part < 2; ++part)
            for (int j = 0; j < 5; ++j) {
                snprintf(v, sizeof v, "%s-%d-%d-%d", abort ? "a" : "c", i, part, j);
                send_one(p, topic, part, v);
            }
        if (abort) {
            /* Delivered first: abort_transaction would purge records not yet sent, and the
             * test wants aborted records in the log. */
            rd_kafka_flush(p, 20000);
            check("abort", rd_kafka_abort_transaction(p, 20000));
        } else {
            check("commit", rd_kafka_commit_transaction(p, 20000));
            committed += 10;
        }
    }
    printf("committed %d\n", committed);
    rd_kafka_destroy(p);
    return 0;
}

static int consume(const char* broker, const char* topic, const char* isolation) {
    char err[512];
    rd_kafka_conf_t* c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", broker, err, sizeof err)
        || rd_kafka_conf_set(c, "group.id", "txn-client-reader", err, sizeof err)
        || rd_kafka_conf_set(c, "isolation.level", isolation, err, sizeof err)
        || rd_kafka_conf_set(c, "enable.partition.eof", "true", err, sizeof err)
        || rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof err))
        die("config", err);
    rd_kafka_t* k = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
    if (!k) die("consumer", err);
    rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(2);
    for (int p = 0; p < 2; ++p)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t e = rd_kafka_assign(k, parts);
    if (e) die("assign", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_destroy(parts);
    int eof = 0;
    for (int polls = 0; eof < 2 && polls < 300; ++polls) { /* bounded: 300 x 100 ms */
        rd_kafka_message_t* m = rd_kafka_consumer_poll(k, 100);
        if (!m) continue;
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) ++eof;
        else if (m->err) die("consume", rd_kafka_message_errstr(m));
        else printf("%.*s\n", (int)m->len, (const char*)m->payload);
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(k);
    rd_kafka_destroy(k);
    if (eof < 2) die("consume", "did not reach the end of both partitions in 30 s");
    return 0;
}

static int zombie(const char* broker, const char* topic, const char* txn_id) {
    rd_kafka_t* p1 = producer(broker, txn_id);
    check("begin", rd_kafka_begin_transaction(p1));
    send_one(p1, topic, 0, "zombie-1");
    rd_kafka_flush(p1, 10000);
    rd_kafka_t* p2 = producer(broker, txn_id); /* fences p1 */
    send_one(p1, topic, 0, "zombie-2");
    rd_kafka_error_t* e = rd_kafka_commit_transaction(p1, 10000);
    if (!e) die("zombie", "the fenced producer committed");
    printf("fenced: %s (fatal %d)\n", rd_kafka_error_string(e), rd_kafka_error_is_fatal(e));
    rd_kafka_error_destroy(e);
    check("begin 2", rd_kafka_begin_transaction(p2));
    char v[64];
    snprintf(v, sizeof v, "fresh-%s", txn_id);
    send_one(p2, topic, 0, v);
    check("commit 2", rd_kafka_commit_transaction(p2, 20000));
    rd_kafka_destroy(p2);
    rd_kafka_destroy(p1);
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 6 && !strcmp(argv[1], "produce")) return produce(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc >= 5 && !strcmp(argv[1], "consume")) return consume(argv[2], argv[3], argv[4]);
    if (argc >= 5 && !strcmp(argv[1], "zombie")) return zombie(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: txn_client produce|consume|zombie BROKER TOPIC ...\n");
    return 2;
}
