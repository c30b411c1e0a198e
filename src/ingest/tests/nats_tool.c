/* Test helper for the JetStream ingest test, on libnats:
 *   nats_tool URL create STREAM SUBJECT [workqueue] -> creates a file-store stream (limits, or
 *                                                  work-queue retention)
 *   nats_tool URL info STREAM                    -> prints "first_seq last_seq messages"
 *   nats_tool URL publish SUBJECT FROM TO        -> publishes "value-<i>" with header h=<i>
 *   nats_tool URL delete STREAM SEQ              -> deletes one message (a gap in sequences)
 *   nats_tool URL dump STREAM FIRST LAST         -> prints "seq subject value ts_ms h=<v>" per message
 * Exit status 0 on success; errors on stderr. */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char* what, natsStatus s, jsErrCode ec) {
    fprintf(stderr, "%s: %s (js error %d)\n", what, natsStatus_GetText(s), (int)ec);
    return 1;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: nats_tool URL create|publish|delete|dump ...\n");
        return 2;
    }
    natsConnection* nc = NULL;
    jsCtx* js = NULL;
    jsErrCode ec = 0;
    natsStatus s = natsConnection_ConnectTo(&nc, argv[1]);
    if (s != NATS_OK) return die("connect", s, 0);
    s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK) return die("jetstream", s, 0);
    const char* cmd = argv[2];
    int rc = 0;
    if (strcmp(cmd, "create") == 0 && argc >= 5) {
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = argv[3];
        const char* subjects[1] = {argv[4]};
        cfg.Subjects = subjects;
        cfg.SubjectsLen = 1;
        cfg.Storage = js_FileStorage;
        if (argc >= 6 && strcmp(argv[5], "workqueue") == 0) cfg.Retention = js_WorkQueuePolicy;
        jsStreamInfo* si = NULL;
        s = js_AddStream(&si, js, &cfg, NULL, &ec);
        if (s != NATS_OK) rc = die("add stream", s, ec);
        else jsStreamInfo_Destroy(si);
    } else if (strcmp(cmd, "publish") == 0 && argc >= 6) {
        long from = atol(argv[4]), to = atol(argv[5]);
        for (long i = from; i <= to && rc == 0; ++i) {
            char val[64], h[32];
            snprintf(val, sizeof val, "value-%ld", i);
            snprintf(h, sizeof h, "%ld", i);
            natsMsg* m = NULL;
            s = natsMsg_Create(&m, argv[3], NULL, val, (int)strlen(val));
            if (s == NATS_OK) s = natsMsgHeader_Add(m, "h", h);
            jsPubAck* pa = NULL;
            if (s == NATS_OK) s = js_PublishMsg(&pa, js, m, NULL, &ec);
            if (s != NATS_OK) rc = die("publish", s, ec);
            jsPubAck_Destroy(pa);
            natsMsg_Destroy(m);
        }
    } else if (strcmp(cmd, "info") == 0 && argc >= 4) {
        jsStreamInfo* si = NULL;
        s = js_GetStreamInfo(&si, js, argv[3], NULL, &ec);
        if (s != NATS_OK) rc = die("stream info", s, ec);
        else {
            printf("%llu %llu %llu\n", (unsigned long long)si->State.FirstSeq, (unsigned long long)si->State.LastSeq,
                   (unsigned long long)si->State.Msgs);
            jsStreamInfo_Destroy(si);
        }
    } else if (strcmp(cmd, "delete") == 0 && argc >= 5) {
        s = js_DeleteMsg(js, argv[3], (uint64_t)atoll(argv[4]), NULL, &ec);
        if (s != NATS_OK) rc = die("delete", s, ec);
    } else if (strcmp(cmd, "dump") == 0 && argc >= 6) {
        long first = atol(argv[4]), last = atol(argv[5]);
        for (long q = first; q <= last; ++q) {
            natsMsg* m = NULL;
            s = js_GetMsg(&m, js, argv[3], (uint64_t)q, NULL, &ec);
            if (s == NATS_NOT_FOUND || ec == JSNoMessageFoundErr) continue;
            if (s != NATS_OK) { rc = die("get", s, ec); break; }
            const char* hv = NULL;
            natsMsgHeader_Get(m, "h", &hv);
            printf("%ld %s %.*s %lld h=%s\n", q, natsMsg_GetSubject(m), natsMsg_GetDataLength(m), natsMsg_GetData(m),
                   (long long)(natsMsg_GetTime(m) / 1000000), hv ? hv : "");
            natsMsg_Destroy(m);
        }
    } else {
        fprintf(stderr, "bad command\n");
        rc = 2;
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return rc;
}
