#pragma once

#include "log/local_tier.h"

#include <memory>

/// Test doubles: a local tier and its partitions that forward every call to a real tier (the
/// embedded log, say). A test derives, overrides the one or two calls it needs to observe or
/// hold back, and leaves the rest forwarded.
namespace floe::log::testing {

namespace fs = std::filesystem;

class forwarding_partition : public log::local_partition {
public:
    explicit forwarding_partition(std::shared_ptr<log::local_partition> inner)
        : _in(std::move(inner)) {}

    result<log::read_result> read(kafka_offset offset,
                                  const log::read_options& opts) const override {
        return _in->read(offset, opts);
    }

    result<log::append_result> append(std::span<uint8_t> records,
                                      const log::append_options& opts) override {
        return _in->append(records, opts);
    }
    result<log::append_result> mirror_append(bytes_view records) override {
        return _in->mirror_append(records);
    }
    bool is_mirror() const noexcept override { return _in->is_mirror(); }
    result<std::optional<log::timestamp_lookup>> offset_for_timestamp(int64_t ts) const override {
        return _in->offset_for_timestamp(ts);
    }
    result<std::optional<log::record_batch_header>>
    batch_header_at(kafka_offset offset) const override {
        return _in->batch_header_at(offset);
    }
    std::optional<log::timestamp_lookup> max_timestamp() const override {
        return _in->max_timestamp();
    }
    log::partition_offsets offsets() const override { return _in->offsets(); }
    result<log::partition_offsets> current_offsets() const override {
        return _in->current_offsets();
    }
    log::partition_offsets known_offsets() const override { return _in->known_offsets(); }
    kafka_offset log_start_offset() const override { return _in->log_start_offset(); }
    result<kafka_offset> delete_records_before(kafka_offset offset) override {
        return _in->delete_records_before(offset);
    }
    kafka_offset records_start() const override { return _in->records_start(); }
    kafka_offset log_end_offset() const override { return _in->log_end_offset(); }
    result<void> flush() override { return _in->flush(); }
    void when_durable(kafka_offset last_offset, std::function<void(result<void>)> done) override {
        _in->when_durable(last_offset, std::move(done));
    }
    result<void> roll() override { return _in->roll(); }
    result<bool> maybe_roll_by_time() override { return _in->maybe_roll_by_time(); }
    std::vector<log::segment_info> segments() const override { return _in->segments(); }
    std::vector<log::segment_info> sealed_segments() const override {
        return _in->sealed_segments();
    }
    result<void> set_offloaded_up_to(kafka_offset next, log::offload_fence fence) override {
        return _in->set_offloaded_up_to(next, fence);
    }
    kafka_offset offloaded_up_to() const override { return _in->offloaded_up_to(); }
    result<void> rewind_offloaded_up_to(kafka_offset next, log::offload_fence fence) override {
        return _in->rewind_offloaded_up_to(next, fence);
    }
    result<std::vector<log::segment_info>>
    apply_retention(std::optional<kafka_offset> remote_covers, log::offload_fence fence) override {
        return _in->apply_retention(remote_covers, fence);
    }
    bool supports_transactions() const noexcept override { return _in->supports_transactions(); }
    result<log::append_result> append_txn_marker(int64_t producer_id, int16_t producer_epoch,
                                                 log::txn_marker m,
                                                 int32_t coordinator_epoch) override {
        return _in->append_txn_marker(producer_id, producer_epoch, m, coordinator_epoch);
    }
    kafka_offset last_stable_offset() const override { return _in->last_stable_offset(); }
    std::vector<log::aborted_txn> aborted_transactions(kafka_offset from,
                                                       kafka_offset to) const override {
        return _in->aborted_transactions(from, to);
    }
    std::map<int64_t, int64_t> open_transactions() const override {
        return _in->open_transactions();
    }
    std::optional<log::producer_state> producer(int64_t producer_id) const override {
        return _in->producer(producer_id);
    }
    std::vector<log::producer_state> producers() const override { return _in->producers(); }
    log::topic_config config() const override { return _in->config(); }
    const log::topic_partition& tp() const noexcept override { return _in->tp(); }
    const uuid& topic_id() const noexcept override { return _in->topic_id(); }

protected:
    std::shared_ptr<log::local_partition> _in;
};

/// Forwards to `inner`; every partition it hands out passes through wrap(), which by default
/// returns the inner tier's partition as it is.
class forwarding_tier : public log::local_tier {
public:
    explicit forwarding_tier(log::local_tier& inner) : _in(inner) {}

    result<log::topic_info> create_topic(std::string_view name, int32_t partitions,
                                         const log::config_map& overrides, bool validate_only,
                                         std::string_view mirror_of, int16_t replication_factor) override {
        return _in.create_topic(name, partitions, overrides, validate_only, mirror_of, replication_factor);
    }
    result<void> delete_topic(std::string_view name) override { return _in.delete_topic(name); }
    result<log::topic_info> create_partitions(std::string_view name, int32_t total) override {
        return _in.create_partitions(name, total);
    }
    result<log::topic_info> alter_topic_config(std::string_view name,
                                               const log::config_map& overrides,
                                               bool validate_only) override {
        return _in.alter_topic_config(name, overrides, validate_only);
    }
    result<log::topic_info> incremental_alter_topic_config(std::string_view name,
                                                           std::span<const log::config_op> ops,
                                                           bool validate_only) override {
        return _in.incremental_alter_topic_config(name, ops, validate_only);
    }
    std::optional<log::topic_info> topic(std::string_view name) const override {
        return _in.topic(name);
    }
    std::optional<log::topic_info> topic(const uuid& id) const override { return _in.topic(id); }
    std::vector<log::topic_info> topics() const override { return _in.topics(); }
    const log::config_map& topic_defaults() const noexcept override { return _in.topic_defaults(); }
    log::config_map dynamic_topic_defaults() const override { return _in.dynamic_topic_defaults(); }
    result<void> set_dynamic_topic_defaults(const log::config_map& defaults,
                                            bool validate_only) override {
        return _in.set_dynamic_topic_defaults(defaults, validate_only);
    }
    fs::path log_dir() const override { return _in.log_dir(); }
    result<void> flush_all() override { return _in.flush_all(); }
    result<void> close() override { return _in.close(); }

protected:
    std::shared_ptr<log::local_partition> find_partition(std::string_view topic,
                                                         int32_t partition) const override {
        auto p = _in.partition(topic, partition);
        return p ? wrap(std::move(p)) : p;
    }
    std::shared_ptr<log::local_partition> find_partition(const uuid& topic_id,
                                                         int32_t partition) const override {
        auto p = _in.partition(topic_id, partition);
        return p ? wrap(std::move(p)) : p;
    }
    /// A partition of the inner tier (never null) as this tier hands it out.
    virtual std::shared_ptr<log::local_partition>
    wrap(std::shared_ptr<log::local_partition> p) const {
        return p;
    }

    log::local_tier& _in;
};

} // namespace floe::log::testing
