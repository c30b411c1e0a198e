/* One consumer-group member for the group integration tests (it_groups.py): a real librdkafka
 * consumer that reports on stdout, one line each, what the test checks:
 *
 *   MEMBER <member id>                     after each rebalance event
 *   ASSIGNMENT <n> <p> <p> ...             the partitions held after each rebalance event
 *   REC <partition> <offset> <value>       a record, printed once it is committed (sync)
 *   COMMITERR <partition> <offset> <err>   a commit that failed (retried)
 *   ERROR <name> <reason>                  a consumer error event
 *   FATAL <name> <reason>                  a fatal error (e.g. fenced static member); exits 3
 *   CLOSED                                 after rd_kafka_consumer_close (SIGTERM)
 *
 * Commits are synchronous, one per record, before the record is reported: a record reported
 * by any member is committed, so across the group nothing reported is read twice unless the
 * broker hands a partition out twice or forgets a commit.
 *
 * usage: group_member <bootstrap> <group> <topic> <strategy> <session.timeout.ms>
 *                     [group.instance.id]
 */
#include <librdkafka/rdkafka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested = 0;
/* From the strategy name, not rd_kafka_rebalance_protocol(): fewer calls into the group
 * thread from the rebalance callback, which also runs inside rd_kafka_consumer_close. */
static int cooperative = 0;
static int closing = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void set(rd_kafka_conf_t* conf, const char* k, const char* v) {
    char err[512];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "config %s=%s: %s\n", k, v, err);
        exit(2);
    }
}

static void print_assignment(rd_kafka_t* rk) {
    rd_kafka_topic_partition_list_t* parts = NULL;
    if (rd_kafka_assignment(rk, &parts) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
    char* id = rd_kafka_memberid(rk);
    printf("MEMBER %s\n", id ? id : "-");
    if (id) rd_kafka_mem_free(rk, id);
    printf("ASSIGNMENT %d", parts->cnt);
    for (int i = 0; i < parts->cnt; ++i) printf(" %d", parts->elems[i].partition);
    printf("\n");
    rd_kafka_topic_partition_list_destroy(parts);
}

static void rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t* parts, void* opaque) {
    (void)opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (cooperative) {
            rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts);
            if (e) {
                printf("ERROR assign %s\n", rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
            }
        } else {
            rd_kafka_assign(rk, parts);
        }
    } else {
        /* Every reported record is committed already: nothing to commit on revocation. */
        if (cooperative) {
            rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts);
            if (e) {
                printf("ERROR unassign %s\n", rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
            }
        } else {
            rd_kafka_assign(rk, NULL);
        }
    }
    if (!closing) print_assignment(rk);
}

int main(int argc, char** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s bootstrap group topic strategy session.timeout.ms [instance]\n",
                argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", argv[1]);
    set(conf, "group.id", argv[2]);
    set(conf, "partition.assignment.strategy", argv[4]);
    cooperative = strstr(argv[4], "cooperative") != NULL;
    set(conf, "session.timeout.ms", argv[5]);
    set(conf, "heartbeat.interval.ms", "500");
    set(conf, "enable.auto.commit", "false");
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "topic.metadata.refresh.interval.ms", "1000");
    if (argc > 6 && argv[6][0]) set(conf, "group.instance.id", argv[6]);
    /* librdkafka's debug contexts (e.g. cgrp,protocol) on stderr, for investigating a failure */
    if (getenv("GROUP_MEMBER_DEBUG")) set(conf, "debug", getenv("GROUP_MEMBER_DEBUG"));
    rd_kafka_conf_set_rebalance_cb(conf, rebalance);

    char err[512];
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "rd_kafka_new: %s\n", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, argv[3], RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t serr = rd_kafka_subscribe(rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (serr) {
        fprintf(stderr, "subscribe: %s\n", rd_kafka_err2str(serr));
        return 2;
    }

    int rc = 0;
    while (!stop_requested) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
        if (!m) continue;
        if (m->err) {
            if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
                char reason[512];
                rd_kafka_resp_err_t fe = rd_kafka_fatal_error(rk, reason, sizeof reason);
                printf("FATAL %s %s\n", rd_kafka_err2name(fe), reason);
                rd_kafka_message_destroy(m);
                rc = 3;
                break;
            }
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                printf("ERROR %s %s\n", rd_kafka_err2name(m->err), rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        /* Commit before reporting; retry while the group is between generations. */
        rd_kafka_resp_err_t ce = RD_KAFKA_RESP_ERR_NO_ERROR;
        for (int attempt = 0; attempt < 100; ++attempt) {
            ce = rd_kafka_commit_message(rk, m, 0);
            if (!ce) break;
            printf("COMMITERR %d %lld %s\n", m->partition, (long long)m->offset,
                   rd_kafka_err2name(ce));
            if (ce == RD_KAFKA_RESP_ERR__FATAL) break;
            usleep(100 * 1000);
        }
        if (!ce)
            printf("REC %d %lld %.*s\n", m->partition, (long long)m->offset, (int)m->len,
                   (const char*)m->payload);
        rd_kafka_message_destroy(m);
    }
    if (rc == 0) {
        closing = 1;
        rd_kafka_consumer_close(rk);
        printf("CLOSED\n");
    }
    rd_kafka_destroy(rk);
    return rc;
}
