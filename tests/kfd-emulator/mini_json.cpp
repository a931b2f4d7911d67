// MIT License - see LICENSE.
#include "mini_json.hpp"

#include <cstdlib>

namespace kfd_test
{
namespace
{
const json null_json;

struct parser
{
    const std::string& text;
    size_t             pos = 0;

    void skip_space()
    {
        while(pos < text.size() &&
              (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t' || text[pos] == '\r'))
            ++pos;
    }

    bool literal(const char* word)
    {
        size_t n = std::string(word).size();
        if(text.compare(pos, n, word) != 0) return false;
        pos += n;
        return true;
    }

    bool string(std::string& out)
    {
        if(pos >= text.size() || text[pos] != '"') return false;
        ++pos;
        while(pos < text.size() && text[pos] != '"')
        {
            char c = text[pos++];
            if(c != '\\')
            {
                out += c;
                continue;
            }
            if(pos >= text.size()) return false;
            char e = text[pos++];
            if(e == 'u' && pos + 4 <= text.size())
            {
                out += static_cast<char>(std::strtoul(text.substr(pos, 4).c_str(), nullptr, 16));
                pos += 4;
            }
            else if(e == 'n')
                out += '\n';
            else
                out += e;
        }
        if(pos >= text.size()) return false;
        ++pos;
        return true;
    }

    bool value(json& out)
    {
        skip_space();
        if(pos >= text.size()) return false;
        char c = text[pos];
        if(c == '{') return object(out);
        if(c == '[') return array(out);
        if(c == '"')
        {
            out.kind = json::type::string;
            return string(out.str);
        }
        if(literal("true"))
        {
            out.kind = json::type::boolean;
            out.b    = true;
            return true;
        }
        if(literal("false"))
        {
            out.kind = json::type::boolean;
            return true;
        }
        if(literal("null")) return true;
        char*       end   = nullptr;
        const char* start = text.c_str() + pos;
        out.num           = std::strtod(start, &end);
        if(end == start) return false;
        out.kind = json::type::number;
        pos += static_cast<size_t>(end - start);
        return true;
    }

    bool array(json& out)
    {
        out.kind = json::type::array;
        ++pos;
        skip_space();
        if(pos < text.size() && text[pos] == ']') return ++pos, true;
        while(true)
        {
            json item;
            if(!value(item)) return false;
            out.items.push_back(item);
            skip_space();
            if(pos < text.size() && text[pos] == ',')
            {
                ++pos;
                continue;
            }
            if(pos < text.size() && text[pos] == ']') return ++pos, true;
            return false;
        }
    }

    bool object(json& out)
    {
        out.kind = json::type::object;
        ++pos;
        skip_space();
        if(pos < text.size() && text[pos] == '}') return ++pos, true;
        while(true)
        {
            skip_space();
            std::string key;
            if(!string(key)) return false;
            skip_space();
            if(pos >= text.size() || text[pos] != ':') return false;
            ++pos;
            json item;
            if(!value(item)) return false;
            out.fields[key] = item;
            skip_space();
            if(pos < text.size() && text[pos] == ',')
            {
                ++pos;
                continue;
            }
            if(pos < text.size() && text[pos] == '}') return ++pos, true;
            return false;
        }
    }
};
} // namespace

const json&
json::operator[](const std::string& key) const
{
    auto it = fields.find(key);
    return it == fields.end() ? null_json : it->second;
}

const json&
json::operator[](size_t index) const
{
    return index < items.size() ? items[index] : null_json;
}

bool
json::parse(const std::string& text, json& out)
{
    parser p{text};
    json   value;
    if(!p.value(value)) return false;
    p.skip_space();
    if(p.pos != text.size()) return false;
    out = value;
    return true;
}
} // namespace kfd_test
