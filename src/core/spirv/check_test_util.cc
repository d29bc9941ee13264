#include "spirv/check_test_util.h"

#include <cctype>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace nvk::spirv {

namespace {

enum class Kind { kCheck, kNext, kNot };

struct Directive {
    Kind kind;
    std::string pattern;
    std::string source;  // the directive line, for messages
};

std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string Trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<Directive> Parse(const std::string& checks) {
    std::vector<Directive> out;
    for (const std::string& line : Lines(checks)) {
        for (auto [tag, kind] : {std::pair{"CHECK-NEXT:", Kind::kNext},
                                 std::pair{"CHECK-NOT:", Kind::kNot},
                                 std::pair{"CHECK:", Kind::kCheck}}) {
            size_t at = line.find(tag);
            if (at == std::string::npos) continue;
            out.push_back({kind, Trim(line.substr(at + std::string(tag).size())), Trim(line)});
            break;
        }
    }
    return out;
}

std::string EscapeLiteral(const std::string& s) {
    std::string out;
    bool in_blank = false;
    for (char c : s) {
        if (c == ' ' || c == '\t') {
            if (!in_blank) out += "\\s+";
            in_blank = true;
            continue;
        }
        in_blank = false;
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

// Capturing groups a user regex opens (so our group numbers stay right).
int CountGroups(const std::string& re) {
    int n = 0;
    for (size_t i = 0; i < re.size(); ++i) {
        if (re[i] == '\\') {
            ++i;
        } else if (re[i] == '(' && (i + 1 >= re.size() || re[i + 1] != '?')) {
            ++n;
        }
    }
    return n;
}

struct Compiled {
    std::regex regex;
    std::vector<std::pair<std::string, int>> captures;  // name -> group number
};

// Turns a pattern into a regex; `known` are the captures of earlier lines.
bool Compile(const std::string& pattern, const std::map<std::string, std::string>& known,
             Compiled& out, std::string& error) {
    std::string re;
    int groups = 0;
    std::map<std::string, int> local;
    size_t i = 0;
    while (i < pattern.size()) {
        size_t open = pattern.find("[[", i);
        size_t brace = pattern.find("{{", i);
        if (brace != std::string::npos && brace < open) {  // {{regex}}: an anonymous regex
            size_t end = pattern.find("}}", brace + 2);
            if (end == std::string::npos) {
                error = "unterminated {{ in: " + pattern;
                return false;
            }
            std::string sub = pattern.substr(brace + 2, end - brace - 2);
            re += EscapeLiteral(pattern.substr(i, brace - i)) + "(?:" + sub + ")";
            groups += CountGroups(sub);
            i = end + 2;
            continue;
        }
        if (open == std::string::npos) {
            re += EscapeLiteral(pattern.substr(i));
            break;
        }
        re += EscapeLiteral(pattern.substr(i, open - i));
        size_t close = pattern.find("]]", open + 2);
        if (close == std::string::npos) {
            error = "unterminated [[ in: " + pattern;
            return false;
        }
        std::string inner = pattern.substr(open + 2, close - open - 2);
        size_t colon = inner.find(':');
        if (colon != std::string::npos) {
            std::string name = inner.substr(0, colon), sub = inner.substr(colon + 1);
            re += "(" + sub + ")";
            local[name] = ++groups;
            out.captures.push_back({name, groups});
            groups += CountGroups(sub);
        } else if (auto it = local.find(inner); it != local.end()) {
            re += "\\" + std::to_string(it->second);
        } else if (auto k = known.find(inner); k != known.end()) {
            re += EscapeLiteral(k->second);
        } else {
            error = "undefined capture [[" + inner + "]]";
            return false;
        }
        i = close + 2;
    }
    // An id or name must not match a longer one (%[[x]] vs %x_1): end the
    // match at a word boundary when the pattern ends in a word character.
    if (!re.empty() && (std::isalnum(static_cast<unsigned char>(pattern.back())) ||
                        pattern.back() == '_' || pattern.back() == ']')) {
        re += "(?![\\w])";
    }
    try {
        out.regex = std::regex(re, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        error = "bad regex '" + re + "': " + e.what();
        return false;
    }
    return true;
}

}  // namespace

std::string CheckPatterns(const std::string& text, const std::string& checks) {
    std::vector<std::string> lines = Lines(text);
    std::vector<Directive> directives = Parse(checks);
    if (directives.empty()) return "no CHECK directives";
    std::map<std::string, std::string> captures;

    auto fail = [&](const Directive& d, const std::string& why) {
        std::string msg = why + "\n  directive: " + d.source + "\n  captures:";
        for (const auto& [name, value] : captures) msg += " " + name + "=" + value;
        return msg + "\n--- text ---\n" + text;
    };
    auto matches = [&](const Compiled& c, const std::string& line, std::smatch& m) {
        return std::regex_search(line, m, c.regex);
    };

    size_t pos = 0;          // first line the next CHECK may match
    size_t last = 0;         // line of the previous match (for CHECK-NEXT)
    bool matched_any = false;
    std::vector<const Directive*> pending_not;
    // Each CHECK-NOT covers the lines from `pos` to the next match.
    auto check_nots = [&](size_t end) -> std::string {
        for (const Directive* d : pending_not) {
            Compiled c;
            std::string error;
            if (!Compile(d->pattern, captures, c, error)) return fail(*d, error);
            for (size_t i = pos; i < end; ++i) {
                std::smatch m;
                if (matches(c, lines[i], m)) {
                    return fail(*d, "CHECK-NOT matched line " + std::to_string(i + 1) + ": " +
                                        lines[i]);
                }
            }
        }
        pending_not.clear();
        return "";
    };

    for (const Directive& d : directives) {
        if (d.kind == Kind::kNot) {
            pending_not.push_back(&d);
            continue;
        }
        Compiled c;
        std::string error;
        if (!Compile(d.pattern, captures, c, error)) return fail(d, error);
        size_t begin = pos, end = lines.size();
        if (d.kind == Kind::kNext) {
            if (!matched_any) return fail(d, "CHECK-NEXT without a previous CHECK");
            begin = last + 1;
            end = std::min(lines.size(), last + 2);
        }
        size_t found = lines.size();
        std::smatch m;
        for (size_t i = begin; i < end; ++i) {
            if (matches(c, lines[i], m)) {
                found = i;
                break;
            }
        }
        if (found == lines.size()) {
            return fail(d, d.kind == Kind::kNext ? "no match on the next line" : "no match");
        }
        if (std::string e = check_nots(found); !e.empty()) return e;
        for (const auto& [name, group] : c.captures) captures[name] = m[group].str();
        last = found;
        pos = found + 1;
        matched_any = true;
    }
    return check_nots(lines.size());
}

}  // namespace nvk::spirv
