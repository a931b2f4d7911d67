// MIT License - see LICENSE.
#include "stats_json.hpp"

#include <cstdio>

namespace kfd_emu
{
namespace
{
// A minimal JSON writer: objects and arrays with comma handling, strings escaped.
class json_writer
{
public:
    std::string text;

    void open(char bracket)
    {
        separate();
        text += bracket;
        first_ = true;
    }
    void close(char bracket)
    {
        text += bracket;
        first_ = false;
    }
    void key(const char* name)
    {
        separate();
        string_value(name);
        text += ':';
        first_ = true; // the value follows without a comma
    }
    void value(uint64_t v)
    {
        separate();
        text += std::to_string(v);
    }
    void value_double(double v)
    {
        separate();
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.17g", v);
        text += buf;
    }
    void value_signed(int64_t v)
    {
        separate();
        text += std::to_string(v);
    }
    void value(bool v)
    {
        separate();
        text += v ? "true" : "false";
    }
    void value(const std::string& v)
    {
        separate();
        string_value(v);
    }
    void null_value()
    {
        separate();
        text += "null";
    }

    template <typename T> void field(const char* name, const T& v)
    {
        key(name);
        value(v);
    }

private:
    void separate()
    {
        if(!first_) text += ',';
        first_ = false;
    }
    // Log text may hold any bytes: valid UTF-8 is kept, every other byte becomes \u00XX, so
    // that the file always parses.
    void string_value(const std::string& v)
    {
        text += '"';
        for(size_t i = 0; i < v.size(); ++i)
        {
            unsigned char c = static_cast<unsigned char>(v[i]);
            if(c == '"' || c == '\\')
            {
                text += '\\';
                text += static_cast<char>(c);
            }
            else if(c < 0x20 || c == 0x7f)
                escape_byte(c);
            else if(c < 0x80)
                text += static_cast<char>(c);
            else if(size_t n = utf8_length(v, i))
            {
                text.append(v, i, n);
                i += n - 1;
            }
            else
                escape_byte(c);
        }
        text += '"';
    }

    void escape_byte(unsigned char c)
    {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        text += buf;
    }

    // The length of the valid UTF-8 sequence starting at v[i] (a byte >= 0x80), or 0.
    static size_t utf8_length(const std::string& v, size_t i)
    {
        unsigned char c          = static_cast<unsigned char>(v[i]);
        size_t        n          = 0;
        unsigned      min_second = 0x80, max_second = 0xbf; // rules out overlongs, surrogates
        if(c >= 0xc2 && c <= 0xdf)
            n = 2;
        else if(c >= 0xe0 && c <= 0xef)
        {
            n          = 3;
            min_second = c == 0xe0 ? 0xa0 : 0x80;
            max_second = c == 0xed ? 0x9f : 0xbf;
        }
        else if(c >= 0xf0 && c <= 0xf4)
        {
            n          = 4;
            min_second = c == 0xf0 ? 0x90 : 0x80;
            max_second = c == 0xf4 ? 0x8f : 0xbf;
        }
        if(n == 0 || i + n > v.size()) return 0;
        for(size_t k = 1; k < n; ++k)
        {
            unsigned char next = static_cast<unsigned char>(v[i + k]);
            unsigned      lo   = k == 1 ? min_second : 0x80;
            unsigned      hi   = k == 1 ? max_second : 0xbf;
            if(next < lo || next > hi) return 0;
        }
        return n;
    }

    bool first_ = true;
};

std::string
hex(uint64_t v, bool prefix)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), prefix ? "0x%llx" : "%llx", static_cast<unsigned long long>(v));
    return buf;
}

// The per-GPU and total counters; lines_read and not_emitted_at_exit come from the scan.
struct counters
{
    uint64_t  lines_read = 0;
    gpu_stats n;
    uint64_t  not_emitted = 0;

    void add(const counters& o)
    {
        lines_read += o.lines_read;
        n.events_emitted += o.n.events_emitted;
        n.events_queued += o.n.events_queued;
        n.dropped_fifo_full += o.n.dropped_fifo_full;
        n.filtered_mask += o.n.filtered_mask;
        n.filtered_pid += o.n.filtered_pid;
        n.no_client += o.n.no_client;
        n.after_vanish += o.n.after_vanish;
        not_emitted += o.not_emitted;
    }
};

void
write_counters(json_writer& w, const counters& c)
{
    w.field("lines_read", c.lines_read);
    w.field("events_emitted", c.n.events_emitted);
    w.field("events_queued", c.n.events_queued);
    w.field("dropped_fifo_full", c.n.dropped_fifo_full);
    w.field("filtered", c.n.filtered_mask + c.n.filtered_pid);
    w.field("filtered_mask", c.n.filtered_mask);
    w.field("filtered_pid", c.n.filtered_pid);
    w.field("no_client", c.n.no_client);
    w.field("after_vanish", c.n.after_vanish);
    w.field("not_emitted_at_exit", c.not_emitted);
}

void
write_client(json_writer& w, const client_report& c)
{
    w.open('{');
    w.field("fd", static_cast<uint64_t>(c.fd < 0 ? 0 : c.fd));
    w.field("pid", static_cast<uint64_t>(c.pid));
    w.field("mask", hex(c.mask, true));
    w.field("closed", c.closed);
    w.field("vanished", c.vanished);
    w.field("queued", c.n.queued);
    w.field("dropped_fifo_full", c.n.dropped_fifo_full);
    w.field("filtered_mask", c.n.filtered_mask);
    w.field("filtered_pid", c.n.filtered_pid);
    w.field("bytes_queued", c.n.bytes_queued);
    w.field("bytes_read", c.n.bytes_read);
    w.field("bytes_lost_efault", c.n.bytes_lost_efault);
    w.field("lines_lost_efault", c.n.lines_lost_efault);
    w.field("injected_read_errors", c.n.injected_read_errors);
    w.field("fifo_bytes_at_exit", c.n.fifo_bytes_at_exit);
    w.field("max_fifo_fill", c.n.max_fifo_fill);
    w.close('}');
}

void
write_settings(json_writer& w, const stats_input& in)
{
    const config& cfg = *in.cfg;
    w.field("schema", std::string("kfd-emulator-stats/1"));
    w.field("log", cfg.log_path);
    w.field("pid", static_cast<uint64_t>(in.pid));
    w.key("self_pid_log");
    if(cfg.has_self)
        w.value(static_cast<uint64_t>(cfg.self_pid));
    else
        w.null_value();
    w.field("pace", std::string(pace_name(cfg.pace)));
    w.key("rate");
    w.value_double(cfg.rate);
    w.field("fifo_bytes", static_cast<uint64_t>(cfg.fifo_bytes));
    w.field("version", std::to_string(cfg.version_major) + "." + std::to_string(cfg.version_minor));
    w.field("superuser", cfg.superuser);
    w.field("timestamps", std::string(cfg.rebase ? "rebase" : "keep"));
    w.key("ns_offset");
    w.value_signed(in.ns_offset);
    w.key("producer");
    w.open('{');
    w.field("started", in.producer_started);
    w.field("finished", in.producer_finished);
    w.field("exit_wait", in.exit_wait);
    w.field("error", in.producer_error);
    w.field("timer_slack_ns", in.producer_timer_slack_ns);
    w.close('}');
    w.field("error", cfg.load_error);
    w.key("warnings");
    w.open('[');
    for(const auto& warning : cfg.warnings)
        w.value(warning);
    w.close(']');
    w.field("warnings_omitted", cfg.warnings_omitted);
}
} // namespace

std::string
stats_to_json(const stats_input& in)
{
    const config& cfg = *in.cfg;
    json_writer   w;
    w.open('{');
    write_settings(w, in);

    counters total;
    w.key("gpus");
    w.open('[');
    for(size_t i = 0; i < in.gpus.size(); ++i)
    {
        const gpu_report& gpu = in.gpus[i];
        counters          c;
        c.lines_read  = i < cfg.lines_per_gpu.size() ? cfg.lines_per_gpu[i] : 0;
        c.n           = gpu.n;
        uint64_t done = gpu.n.events_emitted + gpu.n.after_vanish;
        c.not_emitted = c.lines_read > done ? c.lines_read - done : 0;
        total.add(c);

        w.open('{');
        w.field("node", static_cast<uint64_t>(i + 1));
        w.field("gpu_id", static_cast<uint64_t>(cfg.gpus[i].gpu_id));
        w.field("gpu_id_hex", hex(cfg.gpus[i].gpu_id, false));
        w.field("name", cfg.gpus[i].name);
        write_counters(w, c);
        w.field("vanished", gpu.vanished);
        w.field("vanished_at_line", gpu.vanished_line);
        w.field("clients_omitted", gpu.clients_omitted);
        w.key("clients");
        w.open('[');
        for(const auto& client : gpu.clients)
            write_client(w, client);
        w.close(']');
        w.close('}');
    }
    w.close(']');

    // Unroutable lines belong to no GPU: they count in the total only.
    total.lines_read = cfg.event_lines;
    w.key("total");
    w.open('{');
    write_counters(w, total);
    w.field("malformed", cfg.unroutable);
    w.field("reads_intercepted", in.client_calls.reads_intercepted);
    w.key("client_thread_syscalls");
    w.open('{');
    for(size_t i = 0; i < client_syscall_kinds; ++i)
        w.field(client_syscall_names[i], in.client_calls.syscalls[i]);
    w.close('}');
    w.close('}');
    w.close('}');
    w.text += '\n';
    return w.text;
}
} // namespace kfd_emu
