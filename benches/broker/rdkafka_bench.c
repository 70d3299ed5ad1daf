/*
 * A light load generator for benches/broker/run.py: a librdkafka producer or consumer in
 * C, so that the client costs the machine far less than the broker it measures (Kafka's
 * Java tools need about as much CPU as the broker they drive). Built by the bench itself
 * (benches/broker/light.py) against Debian's librdkafka-dev.
 *
 *   rdkafka_bench produce -b HOST:PORT -t TOPIC[,TOPIC...] -n RECORDS -s SIZE
 *                 [-a ACKS] [-p PARTITIONS -R] [-r RECORDS_PER_S] [-X key=value]...
 *   rdkafka_bench consume -b HOST:PORT -t TOPIC[,TOPIC...] -p PARTITIONS -n RECORDS
 *                 [-T TIMEOUT_S] [-X key=value]...
 *
 * produce: RECORDS records of SIZE random bytes, no key, batch.size 65536, linger.ms 5
 * (the Java runs' settings; -X overrides any property). Without -R librdkafka picks the
 * partition (sticky for keyless records, as Kafka's producer does); with -R the records go
 * round-robin over PARTITIONS partitions of every topic (a produce spread over them).
 * consume: assign() every partition of every topic from offset 0, until RECORDS records
 * (or TIMEOUT_S seconds, 120 by default).
 *
 * Prints one JSON object: records, bytes, seconds (first record to the last delivery or
 * receipt), records_per_s, mib_per_s, the requests of each type librdkafka sent (from its
 * statistics, taken after the run), and for produce the delivery latency percentiles in
 * ms and the errors. Exits 1 when a record failed or did not arrive.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#define MAX_TOPICS 1024
#define MAX_CONFS 64

static const char *topics[MAX_TOPICS];
static int topic_count;
static int64_t *latencies_us; /* one per delivered record */
static int64_t delivered, failed;
static char first_error[512];
/* request counts from librdkafka's statistics, and whether a report came after the run */
static int64_t req_produce, req_fetch, req_metadata;
static volatile int stats_after_run, run_done;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why) {
        fprintf(stderr, "rdkafka_bench: %s: %s\n", what, why);
        exit(2);
}

/* The sum of the numbers after every `"name":` in the statistics JSON: a request type's
 * count appears once per broker, in that broker's "req" object. */
static int64_t sum_of(const char *json, const char *name) {
        char key[64];
        int64_t total = 0;
        snprintf(key, sizeof(key), "\"%s\":", name);
        for (const char *at = strstr(json, key); at; at = strstr(at + 1, key))
                total += strtoll(at + strlen(key), NULL, 10);
        return total;
}

static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
        (void)rk, (void)len, (void)opaque;
        req_produce = sum_of(json, "Produce");
        req_fetch = sum_of(json, "Fetch");
        req_metadata = sum_of(json, "Metadata");
        if (run_done)
                stats_after_run = 1;
        return 0; /* librdkafka frees json */
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque) {
        (void)rk, (void)opaque;
        if (msg->err) {
                if (!failed++)
                        snprintf(first_error, sizeof(first_error), "%s", rd_kafka_err2str(msg->err));
                return;
        }
        latencies_us[delivered++] = rd_kafka_message_latency(msg);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
        char err[512];
        if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK)
                die(key, err);
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

static double percentile_ms(int64_t *sorted, int64_t n, double q) {
        if (n == 0)
                return -1;
        int64_t i = (int64_t)(q * (double)n);
        return (double)sorted[i < n ? i : n - 1] / 1000.0;
}

/* Poll until a statistics report taken after the run arrived (at most 2 s). */
static void final_stats(rd_kafka_t *rk, int consumer) {
        run_done = 1;
        for (double end = now_s() + 2.0; !stats_after_run && now_s() < end;) {
                if (!consumer) {
                        rd_kafka_poll(rk, 50);
                        continue;
                }
                rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 50);
                if (msg)
                        rd_kafka_message_destroy(msg);
        }
}

static void print_requests(void) {
        printf("\"requests\": {\"Produce\": %" PRId64 ", \"Fetch\": %" PRId64
               ", \"Metadata\": %" PRId64 "}, \"stats_after_run\": %s",
               req_produce, req_fetch, req_metadata, stats_after_run ? "true" : "false");
}

static int produce(rd_kafka_conf_t *conf, int64_t records, int size, int partitions,
                   int round_robin, double rate) {
        char err[512];
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!rk)
                die("rd_kafka_new", err);
        latencies_us = calloc((size_t)records, sizeof(int64_t));
        char *payload = malloc((size_t)size);
        if (!latencies_us || !payload)
                die("malloc", strerror(errno));
        for (int i = 0; i < size; i++)
                payload[i] = (char)rand();
        rd_kafka_topic_t *handles[MAX_TOPICS];
        for (int t = 0; t < topic_count; t++)
                handles[t] = rd_kafka_topic_new(rk, topics[t], NULL);
        double start = now_s();
        for (int64_t i = 0; i < records; i++) {
                int t = 0;
                int32_t partition = RD_KAFKA_PARTITION_UA;
                if (round_robin) {
                        int64_t slot = i % ((int64_t)topic_count * partitions);
                        t = (int)(slot / partitions);
                        partition = (int32_t)(slot % partitions);
                } else if (topic_count > 1) {
                        t = (int)(i % topic_count);
                }
                while (rd_kafka_produce(handles[t], partition, RD_KAFKA_MSG_F_COPY, payload,
                                        (size_t)size, NULL, 0, NULL) == -1) {
                        if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                                die("produce", rd_kafka_err2str(rd_kafka_last_error()));
                        rd_kafka_poll(rk, 1);
                }
                if (i % 1000 == 999) {
                        rd_kafka_poll(rk, 0);
                        if (rate > 0) { /* paced: wait until this record is due */
                                double ahead = (double)(i + 1) / rate - (now_s() - start);
                                if (ahead > 0)
                                        usleep((useconds_t)(ahead * 1e6));
                        }
                }
        }
        int left = rd_kafka_flush(rk, 120000) == RD_KAFKA_RESP_ERR_NO_ERROR ? 0 : 1;
        double seconds = now_s() - start;
        final_stats(rk, 0);
        qsort(latencies_us, (size_t)delivered, sizeof(int64_t), cmp_i64);
        printf("{\"tool\": \"rdkafka_bench produce\", \"librdkafka\": \"%s\", "
               "\"records\": %" PRId64 ", \"failed\": %" PRId64 ", \"bytes\": %" PRId64
               ", \"seconds\": %.4f, \"records_per_s\": %.1f, \"mib_per_s\": %.2f, "
               "\"latency_ms\": {\"p50\": %.2f, \"p99\": %.2f, \"p99.9\": %.2f}, "
               "\"first_error\": \"%s\", ",
               rd_kafka_version_str(), delivered, failed, delivered * size, seconds,
               (double)delivered / seconds, (double)delivered * size / seconds / 1048576.0,
               percentile_ms(latencies_us, delivered, 0.5),
               percentile_ms(latencies_us, delivered, 0.99),
               percentile_ms(latencies_us, delivered, 0.999), first_error);
        print_requests();
        printf("}\n");
        for (int t = 0; t < topic_count; t++)
                rd_kafka_topic_destroy(handles[t]);
        rd_kafka_destroy(rk);
        return failed || left || delivered < records;
}

static int consume(rd_kafka_conf_t *conf, int64_t records, int partitions, double timeout_s) {
        char err[512];
        set(conf, "group.id", "rdkafka-bench"); /* assign() only: no join, no commit */
        set(conf, "enable.auto.commit", "false");
        set(conf, "enable.partition.eof", "false");
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!rk)
                die("rd_kafka_new", err);
        rd_kafka_poll_set_consumer(rk);
        rd_kafka_topic_partition_list_t *assignment =
            rd_kafka_topic_partition_list_new(topic_count * partitions);
        for (int t = 0; t < topic_count; t++)
                for (int p = 0; p < partitions; p++)
                        rd_kafka_topic_partition_list_add(assignment, topics[t], p)->offset =
                            RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_resp_err_t e = rd_kafka_assign(rk, assignment);
        if (e)
                die("assign", rd_kafka_err2str(e));
        rd_kafka_topic_partition_list_destroy(assignment);
        int64_t count = 0, bytes = 0;
        double first = 0, last = 0, deadline = now_s() + timeout_s;
        while (count < records && now_s() < deadline) {
                rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 100);
                if (!msg)
                        continue;
                if (msg->err) {
                        if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && !failed++)
                                snprintf(first_error, sizeof(first_error), "%s",
                                         rd_kafka_message_errstr(msg));
                } else {
                        last = now_s();
                        if (!count)
                                first = last;
                        count++;
                        bytes += (int64_t)msg->len;
                }
                rd_kafka_message_destroy(msg);
        }
        double seconds = count > 1 ? last - first : 0;
        final_stats(rk, 1);
        printf("{\"tool\": \"rdkafka_bench consume\", \"librdkafka\": \"%s\", "
               "\"records\": %" PRId64 ", \"bytes\": %" PRId64 ", \"complete\": %s, "
               "\"seconds\": %.4f, \"records_per_s\": %.1f, \"mib_per_s\": %.2f, "
               "\"first_error\": \"%s\", ",
               rd_kafka_version_str(), count, bytes, count >= records ? "true" : "false",
               seconds, seconds > 0 ? (double)count / seconds : 0.0,
               seconds > 0 ? (double)bytes / seconds / 1048576.0 : 0.0, first_error);
        print_requests();
        printf("}\n");
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        return count < records;
}

static void usage(void) {
        fprintf(stderr, "usage: rdkafka_bench produce|consume -b BOOTSTRAP -t TOPIC[,TOPIC...] "
                        "-n RECORDS [-s SIZE] [-a ACKS] [-p PARTITIONS] [-R] [-r RATE] "
                        "[-T TIMEOUT_S] [-X key=value]...\n");
        exit(2);
}

int main(int argc, char **argv) {
        if (argc < 2)
                usage();
        const char *mode = argv[1], *bootstrap = NULL, *acks = "1";
        char *topic_list = NULL;
        const char *confs[MAX_CONFS];
        int conf_count = 0, size = 1024, partitions = 1, round_robin = 0, opt;
        int64_t records = 0;
        double rate = 0, timeout_s = 120;
        optind = 2;
        while ((opt = getopt(argc, argv, "b:t:n:s:a:p:Rr:T:X:")) != -1) {
                switch (opt) {
                case 'b': bootstrap = optarg; break;
                case 't': topic_list = optarg; break;
                case 'n': records = strtoll(optarg, NULL, 10); break;
                case 's': size = atoi(optarg); break;
                case 'a': acks = optarg; break;
                case 'p': partitions = atoi(optarg); break;
                case 'R': round_robin = 1; break;
                case 'r': rate = atof(optarg); break;
                case 'T': timeout_s = atof(optarg); break;
                case 'X':
                        if (conf_count == MAX_CONFS)
                                die("-X", "too many");
                        confs[conf_count++] = optarg;
                        break;
                default: usage();
                }
        }
        if (!bootstrap || !topic_list || records <= 0 || size <= 0 || partitions <= 0)
                usage();
        for (char *t = strtok(topic_list, ","); t; t = strtok(NULL, ",")) {
                if (topic_count == MAX_TOPICS)
                        die("-t", "too many topics");
                topics[topic_count++] = t;
        }
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", bootstrap);
        set(conf, "broker.address.family", "v4");
        set(conf, "statistics.interval.ms", "100");
        rd_kafka_conf_set_stats_cb(conf, on_stats);
        if (strcmp(mode, "produce") == 0) {
                set(conf, "acks", strcmp(acks, "all") == 0 ? "-1" : acks);
                set(conf, "batch.size", "65536");
                set(conf, "linger.ms", "5");
                set(conf, "queue.buffering.max.kbytes", "32768");
        }
        for (int i = 0; i < conf_count; i++) {
                char *kv = strdup(confs[i]), *eq = strchr(kv, '=');
                if (!eq)
                        die("-X", "expected key=value");
                *eq = '\0';
                set(conf, kv, eq + 1);
                free(kv);
        }
        signal(SIGPIPE, SIG_IGN);
        if (strcmp(mode, "produce") == 0)
                return produce(conf, records, size, partitions, round_robin, rate);
        if (strcmp(mode, "consume") == 0)
                return consume(conf, records, partitions, timeout_s);
        usage();
        return 2;
}
