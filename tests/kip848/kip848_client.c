/* A KIP-848 consumer for Floe's tests: librdkafka (built from source, 2.12+) with
 * group.protocol=consumer. Subscribes, prints every assignment change and every record it
 * reads, one line each, written with write(2) so a kill -9 loses no printed line:
 *
 *   ASSIGN <ms> <topic> <partition>      partitions given to this member (incremental)
 *   REVOKE <ms> <topic> <partition>      partitions taken away (after their offsets are committed)
 *   REC <ms> <topic> <partition> <offset> <value>
 *   COMMITTED <ms> <topic> <partition> <offset>   an offset commit the broker accepted
 *   COMMIT_ERR <ms> <error> | <ms> <topic> <partition> <error>   a failed commit
 *   CLOSED <ms>                          after a clean close (SIGTERM)
 *
 * Offsets: each record's offset is stored right after its line is printed; stored offsets are
 * auto-committed every 100 ms and committed synchronously before a revocation is given up,
 * so a partition handed over cleanly is read exactly once across members.
 *
 * Usage: kip848_client <bootstrap> <group> <topic-or-^regex>[,...] [key=value librdkafka config...]
 */
#include <librdkafka/rdkafka.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag = 0;
static void on_term(int sig) {
        (void)sig;
        stop_flag = 1;
}

static long long now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One line, written whole with one write(2). */
static void out(const char *fmt, ...) {
        char buf[4096];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (n > (int)sizeof(buf) - 2) n = (int)sizeof(buf) - 2;
        buf[n++] = '\n';
        const char *p = buf;
        while (n > 0) {
                ssize_t w = write(1, p, (size_t)n);
                if (w <= 0) return;
                p += w;
                n -= (int)w;
        }
}

static void print_parts(const char *what, const rd_kafka_topic_partition_list_t *parts) {
        long long t = now_ms();
        for (int i = 0; i < parts->cnt; i++)
                out("%s %lld %s %d", what, t, parts->elems[i].topic, parts->elems[i].partition);
}

static void rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *parts,
                      void *opaque) {
        (void)opaque;
        rd_kafka_error_t *e = NULL;
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                print_parts("ASSIGN", parts);
                e = rd_kafka_incremental_assign(rk, parts);
        } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
                /* Commit what was read before letting go; a lost assignment cannot commit. */
                if (!rd_kafka_assignment_lost(rk)) {
                        rd_kafka_resp_err_t c = rd_kafka_commit(rk, NULL, 0 /*sync*/);
                        if (c && c != RD_KAFKA_RESP_ERR__NO_OFFSET)
                                out("COMMIT_ERR %lld %s", now_ms(), rd_kafka_err2name(c));
                }
                print_parts("REVOKE", parts);
                e = rd_kafka_incremental_unassign(rk, parts);
        } else {
                out("REBALANCE_ERR %lld %s", now_ms(), rd_kafka_err2name(err));
        }
        if (e) {
                out("REBALANCE_ERR %lld %s", now_ms(), rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
        }
}

static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *offsets,
                      void *opaque) {
        (void)rk;
        (void)opaque;
        if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
                out("COMMIT_ERR %lld %s", now_ms(), rd_kafka_err2name(err));
        for (int i = 0; offsets && i < offsets->cnt; i++) {
                const rd_kafka_topic_partition_t *p = &offsets->elems[i];
                if (p->err)
                        out("COMMIT_ERR %lld %s %d %s", now_ms(), p->topic, p->partition, rd_kafka_err2name(p->err));
                else if (p->offset >= 0)
                        out("COMMITTED %lld %s %d %lld", now_ms(), p->topic, p->partition, (long long)p->offset);
        }
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v) {
        char err[512];
        if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "kip848_client: %s=%s: %s\n", k, v, err);
                exit(2);
        }
}

int main(int argc, char **argv) {
        if (argc < 4) {
                fprintf(stderr, "usage: %s <bootstrap> <group> <topic-or-^regex>[,...] [key=value...]\n", argv[0]);
                return 2;
        }
        signal(SIGTERM, on_term);
        signal(SIGINT, on_term);

        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", argv[1]);
        set(conf, "group.id", argv[2]);
        set(conf, "group.protocol", "consumer");
        set(conf, "auto.offset.reset", "earliest");
        set(conf, "enable.auto.commit", "true");
        set(conf, "auto.commit.interval.ms", "100");
        set(conf, "enable.auto.offset.store", "false");
        set(conf, "topic.metadata.refresh.interval.ms", "1000");
        for (int i = 4; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq) {
                        fprintf(stderr, "kip848_client: expected key=value, got %s\n", argv[i]);
                        return 2;
                }
                *eq = '\0';
                set(conf, argv[i], eq + 1);
        }
        rd_kafka_conf_set_rebalance_cb(conf, rebalance);
        rd_kafka_conf_set_offset_commit_cb(conf, on_commit);

        char err[512];
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "kip848_client: %s\n", err);
                return 1;
        }
        rd_kafka_poll_set_consumer(rk);

        rd_kafka_topic_partition_list_t *subs = rd_kafka_topic_partition_list_new(4);
        char *list = strdup(argv[3]);
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                rd_kafka_topic_partition_list_add(subs, t, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t se = rd_kafka_subscribe(rk, subs);
        rd_kafka_topic_partition_list_destroy(subs);
        free(list);
        if (se) {
                fprintf(stderr, "kip848_client: subscribe: %s\n", rd_kafka_err2str(se));
                return 1;
        }
        out("STARTED %lld %s", now_ms(), rd_kafka_version_str());

        while (!stop_flag) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                if (!m) continue;
                if (m->err) {
                        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                out("ERR %lld %s", now_ms(), rd_kafka_message_errstr(m));
                } else {
                        out("REC %lld %s %d %lld %.*s", now_ms(), rd_kafka_topic_name(m->rkt), m->partition,
                            (long long)m->offset, (int)(m->len > 200 ? 200 : m->len),
                            m->payload ? (const char *)m->payload : "");
                        rd_kafka_offset_store_message(m);
                }
                rd_kafka_message_destroy(m);
        }
        rd_kafka_resp_err_t ce = rd_kafka_consumer_close(rk);
        if (ce) out("CLOSE_ERR %lld %s", now_ms(), rd_kafka_err2name(ce));
        rd_kafka_destroy(rk);
        out("CLOSED %lld", now_ms());
        return 0;
}
