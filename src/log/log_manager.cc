#include "log/log_manager.h"

#include "log/cleaner.h"

#include "log/fs_util.h"

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

namespace floe::log {

namespace fs = std::filesystem;

namespace {

std::string id_hex(const uuid& id) {
    std::string s = id.to_string();
    std::erase(s, '-');
    return s;
}

struct topic_entry {
    topic_info info;
    std::vector<std::shared_ptr<partition_log>> parts;
};

} // namespace

struct log_manager::impl final : flush_scheduler {
    log_manager_options opts;
    fs::path root;
    clock_source* clock = nullptr;

    mutable std::shared_mutex mu; // topics, by_id; exclusive for changes and store writes
    std::map<std::string, topic_entry, std::less<>> topics;
    std::unordered_map<uuid, std::string> by_id;
    bool closed = false;
    config_map dynamic_defaults; // broker-level topic defaults set at run time (AlterConfigs)

    // floe.topic-defaults.* overlaid with the dynamic defaults. Requires mu.
    config_map defaults() const {
        config_map m = opts.topic_defaults;
        for (auto& [k, v] : dynamic_defaults) m[k] = v;
        return m;
    }

    // Group commit: partitions asking for an fsync, served by `flushers` (several, so fsyncs of
    // different partitions overlap; one partition's waiters share each of its fsyncs).
    std::mutex fmu;
    std::condition_variable fcv;
    std::vector<std::shared_ptr<partition_log>> pending;
    bool stop = false;
    std::atomic<bool> running{false}; // the flusher threads serve requests
    std::vector<std::thread> flushers;
    std::thread housekeeper;
    std::condition_variable hcv; // housekeeping sleeps on fmu with its own condition
    std::thread cleaner_thread;  // sleeps on fmu with hcv too
    std::atomic<bool> cleaner_stop{false};
    std::unique_ptr<log_cleaner> cleaner;
    std::mutex cleaner_mu; // one cleaner pass at a time (thread and run_cleaner)

    void request_flush(std::shared_ptr<partition_log> p) override {
        if (!running.load(std::memory_order_acquire)) {
            (void)p->flush();
            return;
        }
        {
            std::lock_guard g(fmu);
            pending.push_back(std::move(p));
        }
        fcv.notify_one();
    }

    fs::path partition_dir(const topic_info& t, int32_t p) const {
        return root / partition_dir_name(t.name, p, t.id);
    }

    /// The live topic other than `name` whose collision key equals `name`'s, if any.
    const topic_info* colliding_topic(std::string_view name) const {
        auto key = topic_collision_key(name);
        for (auto& [n, t] : topics)
            if (n != name && topic_collision_key(n) == key) return &t.info;
        return nullptr;
    }

    std::vector<std::shared_ptr<partition_log>> all_partitions() const {
        std::shared_lock g(mu);
        std::vector<std::shared_ptr<partition_log>> v;
        for (auto& [n, t] : topics) v.insert(v.end(), t.parts.begin(), t.parts.end());
        return v;
    }

    result<void> save_store() const {
        nlohmann::json j;
        j["version"] = 1;
        auto arr = nlohmann::json::array();
        for (auto& [n, t] : topics) {
            nlohmann::json o;
            o["name"] = t.info.name;
            o["id"] = t.info.id.to_string();
            o["partitions"] = t.info.partitions;
            o["configs"] = nlohmann::json::object();
            for (auto& [k, v] : t.info.overrides) o["configs"][k] = v;
            if (!t.info.mirror_of.empty()) o["mirror_of"] = t.info.mirror_of;
            arr.push_back(std::move(o));
        }
        j["topics"] = std::move(arr);
        if (!dynamic_defaults.empty()) {
            j["dynamic_defaults"] = nlohmann::json::object();
            for (auto& [k, v] : dynamic_defaults) j["dynamic_defaults"][k] = v;
        }
        auto text = j.dump(1);
        return write_file_atomic(root / "topics.json", as_bytes(text));
    }

    result<std::shared_ptr<partition_log>> open_partition(const topic_info& t, int32_t p) {
        partition_log_options po;
        po.dir = partition_dir(t, p);
        po.tp = {t.name, p};
        po.topic_id = t.id;
        po.config = t.config;
        po.clock = clock;
        po.flusher = this;
        po.mirror = !t.mirror_of.empty();
        return partition_log::open(std::move(po));
    }

    void flusher_loop(bool periodic) {
        auto last_periodic = clock->monotonic();
        for (;;) {
            std::shared_ptr<partition_log> next;
            {
                std::unique_lock l(fmu);
                fcv.wait_for(l, std::chrono::milliseconds(200),
                             [&] { return stop || !pending.empty(); });
                if (stop && pending.empty()) return;
                if (!pending.empty()) {
                    next = std::move(pending.front());
                    pending.erase(pending.begin());
                }
            }
            // Appends that arrive while this fsync runs are covered by the partition's next one.
            if (next) (void)next->flush();
            if (!periodic) continue;
            auto now = clock->monotonic();
            if (now - last_periodic >= std::chrono::milliseconds(1000)
                || (opts.flush_interval_ms > 0
                    && now - last_periodic >= std::chrono::milliseconds(opts.flush_interval_ms))) {
                last_periodic = now;
                for (auto& p : all_partitions()) {
                    if (p->needs_time_flush()) (void)p->flush();
                    else if (opts.flush_interval_ms > 0) {
                        auto o = p->offsets();
                        if (o.durable_end < o.log_end) (void)p->flush();
                    }
                }
            }
        }
    }

    void cleaner_loop(log_manager* self) {
        std::unique_lock l(fmu);
        while (!stop) {
            hcv.wait_for(l, std::chrono::milliseconds(opts.cleaner_interval_ms));
            if (stop) return;
            l.unlock();
            if (auto r = self->run_cleaner(); !r)
                spdlog::warn("log cleaner: {}", r.error().message());
            l.lock();
        }
    }

    void housekeeping_loop(log_manager* self) {
        std::unique_lock l(fmu);
        while (!stop) {
            hcv.wait_for(l, std::chrono::milliseconds(opts.housekeeping_interval_ms));
            if (stop) return;
            l.unlock();
            if (auto r = self->run_housekeeping(); !r)
                spdlog::warn("log housekeeping: {}", r.error().message());
            l.lock();
        }
    }
};

log_manager::log_manager(std::unique_ptr<impl> i) : _impl(std::move(i)) {}

log_manager::~log_manager() {
    if (_impl) (void)close();
}

const log_manager_options& log_manager::options() const noexcept { return _impl->opts; }
const config_map& log_manager::topic_defaults() const noexcept { return _impl->opts.topic_defaults; }

result<void> local_tier::validate_topic_name(std::string_view name) {
    if (name.empty() || name.size() > 249)
        return fail(errc::invalid_argument, "topic name must be 1-249 characters");
    if (name == "." || name == "..")
        return fail(errc::invalid_argument, "topic name cannot be '.' or '..'");
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                  || c == '.' || c == '_' || c == '-';
        if (!ok)
            return fail(errc::invalid_argument, "topic name '{}' has an illegal character '{}'",
                        name, c);
    }
    return {};
}

std::string local_tier::topic_collision_key(std::string_view name) {
    std::string key(name);
    for (auto& c : key)
        if (c == '.' || c == '-' || c == ':') c = '_';
    return key;
}

std::string log_manager::partition_dir_name(std::string_view topic, int32_t partition, const uuid& topic_id) {
    auto suffix = fmt::format("-{}.{}", partition, id_hex(topic_id));
    if (topic.size() + suffix.size() <= max_file_name_bytes) return fmt::format("{}{}", topic, suffix);
    // A long topic name keeps a prefix and a '~' (never in a topic name, so a shortened name
    // cannot equal a full one); the topic id after it keeps the directory unique.
    return fmt::format("{}~{}", topic.substr(0, max_file_name_bytes - 1 - suffix.size()), suffix);
}

result<std::unique_ptr<log_manager>> log_manager::open(log_manager_options opts) {
    auto I = std::make_unique<impl>();
    I->opts = std::move(opts);
    I->clock = I->opts.clock ? I->opts.clock : &system_clock_source::instance();
    I->root = I->opts.data_dir / "log";
    std::error_code ec;
    fs::create_directories(I->root, ec);
    if (ec) return fail(errc::io_error, "create {}: {}", I->root.string(), ec.message());
    // Defaults must themselves be valid.
    FLOE_TRY_CTX(resolve_topic_config(I->opts.topic_defaults, {}), "topic defaults");

    auto store = read_file(I->root / "topics.json");
    if (!store && store.error().code() != errc::not_found) return fail(store.error());
    if (store) {
        try {
            auto j = nlohmann::json::parse(as_chars(*store));
            if (j.contains("dynamic_defaults"))
                for (auto& [k, v] : j.at("dynamic_defaults").items())
                    I->dynamic_defaults[k] = v.get<std::string>();
            FLOE_TRY_CTX(resolve_topic_config(I->defaults(), {}), "dynamic topic defaults");
            for (auto& o : j.at("topics")) {
                topic_info t;
                t.name = o.at("name").get<std::string>();
                t.id = FLOE_TRY(uuid::parse(o.at("id").get<std::string>()));
                t.partitions = o.at("partitions").get<int32_t>();
                for (auto& [k, v] : o.at("configs").items()) t.overrides[k] = v.get<std::string>();
                if (o.contains("mirror_of")) t.mirror_of = o.at("mirror_of").get<std::string>();
                t.config = FLOE_TRY_CTX(resolve_topic_config(I->defaults(), t.overrides),
                                        "topic {}", t.name);
                if (auto c = check_topic_capabilities(t.config, I->opts.capabilities); !c)
                    spdlog::warn("topic {}: {}; its offload stops until it is fixed", t.name, c.error().message());
                I->by_id[t.id] = t.name;
                auto name = t.name; // (the move below would empty t.name before the lookup)
                I->topics[name] = topic_entry{std::move(t), {}};
            }
        } catch (const std::exception& e) {
            return fail(errc::corrupt, "topic store {}: {}", (I->root / "topics.json").string(),
                        e.what());
        }
    }

    // Topics whose names collide (created before create_topic refused that) share one table
    // downstream; they keep working (readers tell them apart by stream key), but say so.
    {
        std::map<std::string, std::vector<std::string>> by_key;
        for (auto& [n, t] : I->topics) by_key[topic_collision_key(n)].push_back(n);
        for (auto& [key, names] : by_key)
            if (names.size() > 1)
                spdlog::warn("log: topics {} differ only in '.', '-' or '_' and share the table name {}; "
                             "no new topic may collide like this, but these are kept",
                             fmt::join(names, ", "), key);
    }

    // Remove partition directories that belong to no live topic (a delete or create cut short).
    std::map<std::string, bool> expected;
    for (auto& [n, t] : I->topics)
        for (int32_t p = 0; p < t.info.partitions; ++p)
            expected[I->partition_dir(t.info, p).filename().string()] = true;
    for (auto& e : fs::directory_iterator(I->root, ec)) {
        if (!e.is_directory()) continue;
        auto fn = e.path().filename().string();
        if (expected.contains(fn)) continue;
        spdlog::warn("log: removing {} (no live topic owns it)", e.path().string());
        fs::remove_all(e.path(), ec);
    }

    for (auto& [n, t] : I->topics) {
        for (int32_t p = 0; p < t.info.partitions; ++p) {
            auto part = FLOE_TRY_CTX(I->open_partition(t.info, p), "opening {}-{}", n, p);
            t.parts.push_back(std::move(part));
        }
    }

    auto* raw = I.get();
    std::unique_ptr<log_manager> m(new log_manager(std::move(I)));
    if (raw->opts.background_threads) {
        raw->running = true;
        for (int i = 0; i < std::max(1, raw->opts.flusher_threads); ++i)
            raw->flushers.emplace_back([raw, i] { raw->flusher_loop(i == 0); });
        raw->housekeeper = std::thread([raw, mp = m.get()] { raw->housekeeping_loop(mp); });
        if (raw->opts.cleaner_interval_ms > 0)
            raw->cleaner_thread = std::thread([raw, mp = m.get()] { raw->cleaner_loop(mp); });
    }
    return m;
}

result<topic_info> log_manager::create_topic(std::string_view name, int32_t partitions,
                                             const config_map& overrides, bool validate_only,
                                             std::string_view mirror_of, int16_t replication_factor) {
    auto& I = *_impl;
    FLOE_TRY(validate_topic_name(name));
    // One broker owns an embedded log: nothing but 1 is reported (topics.json keeps no factor).
    if (replication_factor != 1)
        return fail(errc::invalid_argument, "replication factor {} on the embedded log of one broker",
                    replication_factor);
    if (partitions <= 0) partitions = I.opts.default_partitions;
    if (partitions > 100000)
        return fail(errc::invalid_argument, "{} partitions is more than Floe allows", partitions);
    topic_info t;
    t.name = std::string(name);
    t.partitions = partitions;
    t.overrides = overrides;
    t.mirror_of = std::string(mirror_of);
    std::unique_lock g(I.mu);
    t.config = FLOE_TRY(resolve_topic_config(I.defaults(), overrides));
    FLOE_TRY(check_topic_capabilities(t.config, I.opts.capabilities));
    if (I.closed) return fail(errc::shutting_down, "log manager closed");
    if (I.topics.contains(name)) return fail(errc::already_exists, "topic {} exists", name);
    // Checked under the same lock as the insert below, so two concurrent creates of colliding
    // names cannot both succeed.
    if (auto* other = I.colliding_topic(name))
        return fail(errc::already_exists,
                    "topic '{}' collides with existing topic '{}': names that differ only in '.', '-' or "
                    "'_' map to the same table ({})",
                    name, other->name, topic_collision_key(name));
    do t.id = uuid::random();
    while (I.by_id.contains(t.id));
    if (validate_only) return t;
    // Partition directories first: a crash before the store write leaves orphans that open()
    // removes, never a topic without its directories.
    topic_entry e{t, {}};
    for (int32_t p = 0; p < partitions; ++p) {
        auto part = I.open_partition(t, p);
        if (!part) {
            for (auto& q : e.parts) (void)q->remove();
            return fail(std::move(part).error());
        }
        e.parts.push_back(std::move(*part));
    }
    I.topics[t.name] = e;
    I.by_id[t.id] = t.name;
    if (auto s = I.save_store(); !s) {
        I.topics.erase(t.name);
        I.by_id.erase(t.id);
        for (auto& q : e.parts) (void)q->remove();
        return fail(std::move(s).error());
    }
    spdlog::info("log: created topic {} ({} partitions, id {})", t.name, partitions,
                 t.id.to_string());
    return t;
}

result<void> log_manager::delete_topic(std::string_view name) {
    auto& I = *_impl;
    topic_entry e;
    {
        std::unique_lock g(I.mu);
        auto it = I.topics.find(name);
        if (it == I.topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
        e = std::move(it->second);
        I.topics.erase(it);
        I.by_id.erase(e.info.id);
        if (auto s = I.save_store(); !s) {
            I.by_id[e.info.id] = e.info.name;
            I.topics[e.info.name] = std::move(e);
            return fail(std::move(s).error());
        }
    }
    // The store no longer names the topic: removing data may now fail or crash safely.
    for (auto& p : e.parts)
        if (auto r = p->remove(); !r) spdlog::warn("log: deleting {}: {}", name, r.error().message());
    spdlog::info("log: deleted topic {}", name);
    return {};
}

result<topic_info> log_manager::create_partitions(std::string_view name, int32_t total) {
    auto& I = *_impl;
    std::unique_lock g(I.mu);
    auto it = I.topics.find(name);
    if (it == I.topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
    auto& e = it->second;
    if (total <= e.info.partitions)
        return fail(errc::invalid_argument, "topic {} has {} partitions; {} is not more", name,
                    e.info.partitions, total);
    std::vector<std::shared_ptr<partition_log>> added;
    for (int32_t p = e.info.partitions; p < total; ++p) {
        auto part = I.open_partition(e.info, p);
        if (!part) {
            for (auto& q : added) (void)q->remove();
            return fail(std::move(part).error());
        }
        added.push_back(std::move(*part));
    }
    int32_t old = e.info.partitions;
    e.info.partitions = total;
    if (auto s = I.save_store(); !s) {
        e.info.partitions = old;
        for (auto& q : added) (void)q->remove();
        return fail(std::move(s).error());
    }
    e.parts.insert(e.parts.end(), added.begin(), added.end());
    return e.info;
}

result<topic_info> log_manager::alter_topic_config(std::string_view name,
                                                   const config_map& overrides,
                                                   bool validate_only) {
    auto& I = *_impl;
    std::unique_lock g(I.mu);
    auto it = I.topics.find(name);
    if (it == I.topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
    auto cfg = FLOE_TRY(resolve_topic_config(I.defaults(), overrides));
    FLOE_TRY(check_topic_capabilities(cfg, I.opts.capabilities));
    auto& e = it->second;
    topic_info next = e.info;
    next.overrides = overrides;
    next.config = cfg;
    if (validate_only) return next;
    std::swap(e.info, next);
    if (auto s = I.save_store(); !s) {
        std::swap(e.info, next);
        return fail(std::move(s).error());
    }
    for (auto& p : e.parts) p->update_config(cfg);
    return e.info;
}

result<config_map> apply_config_ops(config_map overrides, std::span<const config_op> ops) {
    auto split = [](std::string_view s) {
        std::vector<std::string> v;
        size_t at = 0;
        while (at <= s.size() && !s.empty()) {
            size_t c = s.find(',', at);
            if (c == std::string_view::npos) c = s.size();
            if (c > at) v.emplace_back(s.substr(at, c - at));
            at = c + 1;
        }
        return v;
    };
    for (auto& op : ops) {
        auto* key = find_topic_config_key(op.key);
        if (!key) return fail(errc::invalid_argument, "unknown topic config '{}'", op.key);
        switch (op.op) {
        case config_op::kind::set: overrides[op.key] = op.value; break;
        case config_op::kind::remove: overrides.erase(op.key); break;
        case config_op::kind::append:
        case config_op::kind::subtract: {
            if (key->type != config_type::list)
                return fail(errc::invalid_argument, "config {} is not a list", op.key);
            auto cur_it = overrides.find(op.key);
            std::string cur = cur_it != overrides.end() ? cur_it->second
                                                        : std::string(key->default_value);
            auto items = split(cur);
            for (auto& v : split(op.value)) {
                auto f = std::find(items.begin(), items.end(), v);
                if (op.op == config_op::kind::append && f == items.end()) items.push_back(v);
                if (op.op == config_op::kind::subtract && f != items.end()) items.erase(f);
            }
            std::string joined;
            for (auto& v : items) joined += (joined.empty() ? "" : ",") + v;
            overrides[op.key] = joined;
            break;
        }
        }
    }
    return overrides;
}

result<topic_info> log_manager::incremental_alter_topic_config(std::string_view name,
                                                               std::span<const config_op> ops,
                                                               bool validate_only) {
    config_map overrides;
    {
        std::shared_lock g(_impl->mu);
        auto it = _impl->topics.find(name);
        if (it == _impl->topics.end()) return fail(errc::not_found, "topic {} does not exist", name);
        overrides = it->second.info.overrides;
    }
    overrides = FLOE_TRY(apply_config_ops(std::move(overrides), ops));
    return alter_topic_config(name, overrides, validate_only);
}

config_map log_manager::dynamic_topic_defaults() const {
    std::shared_lock g(_impl->mu);
    return _impl->dynamic_defaults;
}

result<void> log_manager::set_dynamic_topic_defaults(const config_map& defaults,
                                                     bool validate_only) {
    auto& I = *_impl;
    std::unique_lock g(I.mu);
    auto old = I.dynamic_defaults;
    I.dynamic_defaults = defaults;
    // Every topic must still resolve; nothing changes unless all do.
    std::vector<std::pair<topic_entry*, topic_config>> next;
    for (auto& [n, t] : I.topics) {
        auto c = resolve_topic_config(I.defaults(), t.info.overrides);
        // (A topic encrypted already, found so at open without a provider, was warned about then.)
        if (c && !t.info.config.encrypted())
            if (auto ok = check_topic_capabilities(*c, I.opts.capabilities); !ok) c = std::unexpected(ok.error());
        if (!c) {
            I.dynamic_defaults = old;
            return fail(c.error().code(), "{} (topic {})", c.error().message(), n);
        }
        next.push_back({&t, *c});
    }
    auto dflt = resolve_topic_config(I.defaults(), {});
    if (dflt)
        if (auto ok = check_topic_capabilities(*dflt, I.opts.capabilities); !ok) dflt = std::unexpected(ok.error());
    if (!dflt || validate_only) {
        I.dynamic_defaults = old;
        if (!dflt) return fail(std::move(dflt).error());
        return {};
    }
    if (auto s = I.save_store(); !s) {
        I.dynamic_defaults = old;
        return fail(std::move(s).error());
    }
    for (auto& [t, c] : next) {
        t->info.config = c;
        for (auto& p : t->parts) p->update_config(c);
    }
    return {};
}

std::optional<topic_info> log_manager::topic(std::string_view name) const {
    std::shared_lock g(_impl->mu);
    auto it = _impl->topics.find(name);
    if (it == _impl->topics.end()) return std::nullopt;
    return it->second.info;
}

std::optional<topic_info> log_manager::topic(const uuid& id) const {
    std::shared_lock g(_impl->mu);
    auto it = _impl->by_id.find(id);
    if (it == _impl->by_id.end()) return std::nullopt;
    return _impl->topics.find(it->second)->second.info;
}

std::vector<topic_info> log_manager::topics() const {
    std::shared_lock g(_impl->mu);
    std::vector<topic_info> v;
    v.reserve(_impl->topics.size());
    for (auto& [n, t] : _impl->topics) v.push_back(t.info);
    return v;
}

std::shared_ptr<partition_log> log_manager::partition(std::string_view topic,
                                                      int32_t partition) const {
    std::shared_lock g(_impl->mu);
    auto it = _impl->topics.find(topic);
    if (it == _impl->topics.end() || partition < 0 || size_t(partition) >= it->second.parts.size())
        return nullptr;
    return it->second.parts[size_t(partition)];
}

std::shared_ptr<partition_log> log_manager::partition(const uuid& topic_id,
                                                      int32_t partition) const {
    std::shared_lock g(_impl->mu);
    auto it = _impl->by_id.find(topic_id);
    if (it == _impl->by_id.end()) return nullptr;
    auto& parts = _impl->topics.find(it->second)->second.parts;
    if (partition < 0 || size_t(partition) >= parts.size()) return nullptr;
    return parts[size_t(partition)];
}

std::shared_ptr<local_partition> log_manager::find_partition(std::string_view topic, int32_t p) const {
    return partition(topic, p);
}

std::shared_ptr<local_partition> log_manager::find_partition(const uuid& topic_id, int32_t p) const {
    return partition(topic_id, p);
}

std::filesystem::path log_manager::log_dir() const { return _impl->opts.data_dir / "log"; }

result<size_t> log_manager::run_housekeeping() {
    size_t deleted = 0;
    for (auto& p : _impl->all_partitions()) {
        FLOE_TRY(p->maybe_roll_by_time());
        // Tiered segments are deleted by the storage worker, which knows what the lake holds.
        deleted += FLOE_TRY(p->apply_retention(std::nullopt)).size();
    }
    return deleted;
}

result<size_t> log_manager::run_cleaner() {
    auto& I = *_impl;
    std::lock_guard g(I.cleaner_mu);
    if (!I.cleaner)
        I.cleaner = std::make_unique<log_cleaner>(cleaner_options{
            .io_max_bytes_per_second = I.opts.cleaner_io_max_bytes_per_second,
            .clock = I.opts.clock,
            .stop = &I.cleaner_stop,
        });
    size_t cleaned = 0;
    double max_ratio = 0;
    for (auto& p : I.all_partitions()) {
        if (I.cleaner_stop.load()) break;
        if (!p->config().compacted()) continue;
        auto r = I.cleaner->clean(*p);
        if (!r) {
            spdlog::warn("log cleaner {}-{}: {}", p->tp().topic, p->tp().partition,
                         r.error().message());
            continue;
        }
        max_ratio = std::max(max_ratio, r->dirty_ratio);
        if (r->cleaned) ++cleaned;
    }
    log_cleaner::note_round(max_ratio);
    return cleaned;
}

result<void> log_manager::flush_all() {
    for (auto& p : _impl->all_partitions()) FLOE_TRY(p->flush());
    return {};
}

result<void> log_manager::close() {
    auto& I = *_impl;
    {
        std::lock_guard g(I.fmu);
        if (I.stop) return {};
        I.stop = true;
    }
    I.fcv.notify_all();
    I.hcv.notify_all();
    for (auto& t : I.flushers)
        if (t.joinable()) t.join();
    // Requests left after the last round are served by each partition's close() below.
    I.running = false;
    I.cleaner_stop = true;
    if (I.housekeeper.joinable()) I.housekeeper.join();
    if (I.cleaner_thread.joinable()) I.cleaner_thread.join();
    result<void> first;
    {
        std::unique_lock g(I.mu);
        I.closed = true;
    }
    for (auto& p : I.all_partitions()) {
        auto r = p->close();
        if (!r && first) first = r;
    }
    return first;
}

} // namespace floe::log
