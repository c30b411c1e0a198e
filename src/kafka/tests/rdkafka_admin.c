/* A small librdkafka Admin API client for the integration tests: each subcommand makes one admin
 * call and prints what the broker answered, as librdkafka decoded it (Floe's own decoders are not
 * involved). Exit status 0 when the call succeeded, 1 when the broker answered an error (printed
 * as "ERR <Kafka error name> <message>"), 2 on usage or client failures.
 *
 *   rdkafka_admin BROKER create-topic TOPIC PARTITIONS [KEY=VALUE...]
 *   rdkafka_admin BROKER create-partitions TOPIC TOTAL [validate]
 *   rdkafka_admin BROKER delete-records TOPIC PARTITION OFFSET     -> prints the low watermark
 *   rdkafka_admin BROKER describe-config topic|broker NAME KEY     -> "VALUE source=S read_only=R default=D"
 *   rdkafka_admin BROKER alter-config topic|broker NAME KEY=VALUE...
 *   rdkafka_admin BROKER delete-group-offsets GROUP TOPIC PARTITION
 *   rdkafka_admin BROKER list-group-offsets GROUP TOPIC PARTITION   -> "TOPIC-P OFFSET" (-1001: none)
 */
#include <librdkafka/rdkafka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_kafka_t *rk;
static rd_kafka_queue_t *queue;

static int usage(void) {
    fprintf(stderr, "usage: rdkafka_admin BROKER COMMAND ARGS... (see the source)\n");
    return 2;
}

/* Waits (bounded) for the result event of the admin call just made. */
static rd_kafka_event_t *wait_result(rd_kafka_event_type_t type) {
    rd_kafka_event_t *ev = rd_kafka_queue_poll(queue, 30000);
    if (!ev) {
        fprintf(stderr, "no answer within 30 s\n");
        exit(2);
    }
    if (rd_kafka_event_type(ev) != type) {
        fprintf(stderr, "unexpected event %s: %s\n", rd_kafka_event_name(ev),
                rd_kafka_event_error_string(ev) ? rd_kafka_event_error_string(ev) : "");
        exit(2);
    }
    if (rd_kafka_event_error(ev)) {
        printf("ERR %s %s\n", rd_kafka_err2name(rd_kafka_event_error(ev)), rd_kafka_event_error_string(ev));
        exit(1);
    }
    return ev;
}

static rd_kafka_AdminOptions_t *options(rd_kafka_admin_op_t op) {
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, op);
    char err[256];
    rd_kafka_AdminOptions_set_request_timeout(o, 30000, err, sizeof err);
    return o;
}

static int report_topic_results(const rd_kafka_topic_result_t **res, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
        if (e) {
            printf("ERR %s %s\n", rd_kafka_err2name(e),
                   rd_kafka_topic_result_error_string(res[i]) ? rd_kafka_topic_result_error_string(res[i]) : "");
            bad = 1;
        } else {
            printf("ok %s\n", rd_kafka_topic_result_name(res[i]));
        }
    }
    return bad;
}

static rd_kafka_ResourceType_t resource_type(const char *s) {
    return strcmp(s, "broker") == 0 ? RD_KAFKA_RESOURCE_BROKER : RD_KAFKA_RESOURCE_TOPIC;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    queue = rd_kafka_queue_new(rk);
    const char *cmd = argv[2];
    int rc = 0;

    if (strcmp(cmd, "create-topic") == 0 && argc >= 5) {
        rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(argv[3], atoi(argv[4]), -1, err, sizeof err);
        if (!nt) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        for (int i = 5; i < argc; i++) {
            char *eq = strchr(argv[i], '=');
            if (!eq) return usage();
            *eq = 0;
            rd_kafka_NewTopic_set_config(nt, argv[i], eq + 1);
        }
        rd_kafka_CreateTopics(rk, &nt, 1, options(RD_KAFKA_ADMIN_OP_CREATETOPICS), queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_CREATETOPICS_RESULT);
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        rc = report_topic_results(res, n);
    } else if (strcmp(cmd, "create-partitions") == 0 && argc >= 5) {
        rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(argv[3], (size_t)atoi(argv[4]), err, sizeof err);
        if (!np) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        rd_kafka_AdminOptions_t *o = options(RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
        if (argc >= 6 && strcmp(argv[5], "validate") == 0) rd_kafka_AdminOptions_set_validate_only(o, 1, err, sizeof err);
        rd_kafka_CreatePartitions(rk, &np, 1, o, queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT);
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev), &n);
        rc = report_topic_results(res, n);
    } else if (strcmp(cmd, "delete-records") == 0 && argc >= 6) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, argv[3], atoi(argv[4]))->offset = strtoll(argv[5], NULL, 10);
        rd_kafka_DeleteRecords_t *dr = rd_kafka_DeleteRecords_new(l);
        rd_kafka_DeleteRecords(rk, &dr, 1, options(RD_KAFKA_ADMIN_OP_DELETERECORDS), queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_DELETERECORDS_RESULT);
        const rd_kafka_topic_partition_list_t *out =
            rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));
        for (int i = 0; i < out->cnt; i++) {
            if (out->elems[i].err) {
                printf("ERR %s\n", rd_kafka_err2name(out->elems[i].err));
                rc = 1;
            } else {
                printf("%lld\n", (long long)out->elems[i].offset);
            }
        }
    } else if (strcmp(cmd, "describe-config") == 0 && argc >= 6) {
        rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(resource_type(argv[3]), argv[4]);
        rd_kafka_DescribeConfigs(rk, &cr, 1, options(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS), queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT);
        size_t n;
        const rd_kafka_ConfigResource_t **res =
            rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev), &n);
        rc = 1;
        for (size_t i = 0; i < n; i++) {
            if (rd_kafka_ConfigResource_error(res[i])) {
                printf("ERR %s %s\n", rd_kafka_err2name(rd_kafka_ConfigResource_error(res[i])),
                       rd_kafka_ConfigResource_error_string(res[i]));
                break;
            }
            size_t ne;
            const rd_kafka_ConfigEntry_t **es = rd_kafka_ConfigResource_configs(res[i], &ne);
            for (size_t k = 0; k < ne; k++) {
                if (strcmp(rd_kafka_ConfigEntry_name(es[k]), argv[5]) != 0) continue;
                const char *v = rd_kafka_ConfigEntry_value(es[k]);
                printf("%s source=%s read_only=%d default=%d\n", v ? v : "(null)",
                       rd_kafka_ConfigSource_name(rd_kafka_ConfigEntry_source(es[k])),
                       rd_kafka_ConfigEntry_is_read_only(es[k]), rd_kafka_ConfigEntry_is_default(es[k]));
                rc = 0;
            }
            if (rc) printf("ERR missing %s not described (%zu entries)\n", argv[5], ne);
        }
    } else if (strcmp(cmd, "alter-config") == 0 && argc >= 6) {
        rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(resource_type(argv[3]), argv[4]);
        for (int i = 5; i < argc; i++) {
            char *eq = strchr(argv[i], '=');
            if (!eq) return usage();
            *eq = 0;
            rd_kafka_ConfigResource_set_config(cr, argv[i], eq + 1);
        }
        rd_kafka_AlterConfigs(rk, &cr, 1, options(RD_KAFKA_ADMIN_OP_ALTERCONFIGS), queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_ALTERCONFIGS_RESULT);
        size_t n;
        const rd_kafka_ConfigResource_t **res =
            rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &n);
        for (size_t i = 0; i < n; i++) {
            if (rd_kafka_ConfigResource_error(res[i])) {
                printf("ERR %s %s\n", rd_kafka_err2name(rd_kafka_ConfigResource_error(res[i])),
                       rd_kafka_ConfigResource_error_string(res[i]));
                rc = 1;
            } else {
                printf("ok\n");
            }
        }
    } else if (strcmp(cmd, "delete-group-offsets") == 0 && argc >= 6) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, argv[4], atoi(argv[5]));
        rd_kafka_DeleteConsumerGroupOffsets_t *d = rd_kafka_DeleteConsumerGroupOffsets_new(argv[3], l);
        rd_kafka_DeleteConsumerGroupOffsets(rk, &d, 1, options(RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS),
                                            queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_DELETECONSUMERGROUPOFFSETS_RESULT);
        size_t n;
        const rd_kafka_group_result_t **res = rd_kafka_DeleteConsumerGroupOffsets_result_groups(
            rd_kafka_event_DeleteConsumerGroupOffsets_result(ev), &n);
        for (size_t i = 0; i < n; i++) {
            const rd_kafka_error_t *ge = rd_kafka_group_result_error(res[i]);
            if (ge) {
                printf("ERR %s %s\n", rd_kafka_error_name(ge), rd_kafka_error_string(ge));
                rc = 1;
                continue;
            }
            const rd_kafka_topic_partition_list_t *ps = rd_kafka_group_result_partitions(res[i]);
            for (int k = 0; ps && k < ps->cnt; k++) {
                if (ps->elems[k].err) {
                    printf("ERR %s\n", rd_kafka_err2name(ps->elems[k].err));
                    rc = 1;
                } else {
                    printf("ok %s-%d\n", ps->elems[k].topic, ps->elems[k].partition);
                }
            }
        }
    } else if (strcmp(cmd, "list-group-offsets") == 0 && argc >= 6) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, argv[4], atoi(argv[5]));
        rd_kafka_ListConsumerGroupOffsets_t *q = rd_kafka_ListConsumerGroupOffsets_new(argv[3], l);
        rd_kafka_ListConsumerGroupOffsets(rk, &q, 1, options(RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS), queue);
        rd_kafka_event_t *ev = wait_result(RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT);
        size_t n;
        const rd_kafka_group_result_t **res = rd_kafka_ListConsumerGroupOffsets_result_groups(
            rd_kafka_event_ListConsumerGroupOffsets_result(ev), &n);
        for (size_t i = 0; i < n; i++) {
            const rd_kafka_topic_partition_list_t *ps = rd_kafka_group_result_partitions(res[i]);
            for (int k = 0; ps && k < ps->cnt; k++)
                printf("%s-%d %lld\n", ps->elems[k].topic, ps->elems[k].partition, (long long)ps->elems[k].offset);
        }
    } else {
        return usage();
    }
    fflush(stdout);
    rd_kafka_queue_destroy(queue);
    rd_kafka_destroy(rk);
    return rc;
}
