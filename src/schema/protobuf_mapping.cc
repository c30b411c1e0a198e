#include "schema/protobuf_mapping.h"

#include <fmt/format.h>

#include <algorithm>

namespace floe::schema {

namespace gp = google::protobuf;
using iceberg::nested_field;
using iceberg::type;
using iceberg::type_id;
using iceberg::type_ptr;

protobuf_wkt protobuf_well_known(const gp::Descriptor& m) noexcept {
    const std::string& n = m.full_name();
    if (!n.starts_with("google.protobuf.")) return protobuf_wkt::none;
    if (n == "google.protobuf.Timestamp") return protobuf_wkt::timestamp;
    if (n == "google.protobuf.Duration") return protobuf_wkt::duration;
    static constexpr std::string_view wrappers[] = {"DoubleValue", "FloatValue",  "Int64Value",
                                                    "UInt64Value", "Int32Value",  "UInt32Value",
                                                    "BoolValue",   "StringValue", "BytesValue"};
    std::string_view short_name = std::string_view(n).substr(16);
    for (auto w : wrappers)
        if (short_name == w && m.field_count() == 1 && m.field(0)->number() == 1)
            return protobuf_wkt::wrapper;
    return protobuf_wkt::none;
}

type_ptr protobuf_scalar_type(const gp::FieldDescriptor& f) {
    using T = gp::FieldDescriptor;
    switch (f.type()) {
    case T::TYPE_INT32:
    case T::TYPE_SINT32:
    case T::TYPE_SFIXED32:
        return type::primitive(type_id::int_);
    case T::TYPE_UINT32:
    case T::TYPE_FIXED32:
    case T::TYPE_INT64:
    case T::TYPE_SINT64:
    case T::TYPE_SFIXED64:
        return type::primitive(type_id::long_);
    case T::TYPE_UINT64:
    case T::TYPE_FIXED64: {
        auto t = std::make_shared<type>();
        t->id = type_id::decimal;
        t->precision = 20;
        t->scale = 0;
        return t;
    }
    case T::TYPE_FLOAT:
        return type::primitive(type_id::float_);
    case T::TYPE_DOUBLE:
        return type::primitive(type_id::double_);
    case T::TYPE_BOOL:
        return type::primitive(type_id::boolean);
    case T::TYPE_STRING:
    case T::TYPE_ENUM:
        return type::primitive(type_id::string);
    case T::TYPE_BYTES:
        return type::primitive(type_id::binary);
    case T::TYPE_MESSAGE:
    case T::TYPE_GROUP:
        break;
    }
    return nullptr;
}

namespace {

class pb_mapper {
public:
    /// The type of one value of `f` (a list's element, not the list); nullptr: no column.
    result<type_ptr> value_type(const gp::FieldDescriptor& f) {
        if (f.type() == gp::FieldDescriptor::TYPE_GROUP)
            return fail(errc::unsupported,
                        "field {} is a proto2 group, which typed tables do not decode",
                        f.full_name());
        if (f.type() != gp::FieldDescriptor::TYPE_MESSAGE) return protobuf_scalar_type(f);
        const gp::Descriptor& m = *f.message_type();
        switch (protobuf_well_known(m)) {
        case protobuf_wkt::timestamp:
            return type::primitive(type_id::timestamptz);
        case protobuf_wkt::duration:
            return type::primitive(type_id::long_);
        case protobuf_wkt::wrapper:
            return protobuf_scalar_type(*m.field(0));
        case protobuf_wkt::none:
            break;
        }
        auto fields = FLOE_TRY(message_fields(m));
        if (fields.empty()) return type_ptr{};
        auto t = std::make_shared<type>();
        t->id = type_id::struct_;
        t->fields = std::move(fields);
        return type_ptr(t);
    }

    result<type_ptr> field_type(const gp::FieldDescriptor& f) {
        if (f.is_map()) {
            auto* entry = f.message_type();
            auto k = protobuf_scalar_type(*entry->map_key());
            auto v = FLOE_TRY(value_type(*entry->map_value()));
            if (!v)
                return fail(errc::invalid_argument, "map {} of empty messages has no Iceberg type",
                            f.full_name());
            auto t = std::make_shared<type>();
            t->id = type_id::map;
            t->key = k;
            t->value = v;
            t->value_required = false;
            return type_ptr(t);
        }
        auto v = FLOE_TRY(value_type(f));
        if (!v || !f.is_repeated()) return v;
        auto t = std::make_shared<type>();
        t->id = type_id::list;
        t->element = v;
        t->element_required = false;
        return type_ptr(t);
    }

    result<std::vector<nested_field>> message_fields(const gp::Descriptor& m) {
        if (std::find(_stack.begin(), _stack.end(), &m) != _stack.end())
            return fail(
                errc::invalid_argument,
                "message {} is recursive: Iceberg cannot express a type that contains itself",
                m.full_name());
        if (_stack.size() >= 64)
            return fail(errc::invalid_argument, "messages nested deeper than 64 levels");
        _stack.push_back(&m);
        std::vector<nested_field> out;
        auto done = [&](result<std::vector<nested_field>> r) {
            _stack.pop_back();
            return r;
        };
        for (int i = 0; i < m.field_count(); ++i) {
            const gp::FieldDescriptor& f = *m.field(i);
            const gp::OneofDescriptor* o = f.real_containing_oneof();
            if (o) {
                if (o->field(0) != &f) continue; // the oneof's struct is placed at its first branch
                auto t = std::make_shared<type>();
                t->id = type_id::struct_;
                for (int b = 0; b < o->field_count(); ++b) {
                    auto bt = field_type(*o->field(b));
                    if (!bt)
                        return done(std::unexpected(std::move(bt).error().with_context(
                            "field {}", o->field(b)->full_name())));
                    if (!*bt) continue;
                    t->fields.push_back(nested_field{.id = 0,
                                                     .name = o->field(b)->name(),
                                                     .required = false,
                                                     .field_type = *bt});
                }
                if (!t->fields.empty())
                    out.push_back(nested_field{
                        .id = 0, .name = o->name(), .required = false, .field_type = t});
                continue;
            }
            auto ft = field_type(f);
            if (!ft)
                return done(
                    std::unexpected(std::move(ft).error().with_context("field {}", f.full_name())));
            if (!*ft) continue;
            out.push_back(
                nested_field{.id = 0, .name = f.name(), .required = false, .field_type = *ft});
        }
        return done(std::move(out));
    }

private:
    std::vector<const gp::Descriptor*> _stack;
};

} // namespace

result<std::vector<nested_field>> protobuf_to_iceberg(const gp::Descriptor& m) {
    pb_mapper p;
    return p.message_fields(m);
}

} // namespace floe::schema
