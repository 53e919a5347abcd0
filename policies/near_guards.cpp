// The numbers and negation guards, and the order of all guards
// (policies/near_guards.hpp).
#include "policies/near_guards.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "policies/near_detail.hpp"
#include "policies/near_text.hpp"

namespace reprox::policy::near {

namespace {

using namespace detail;

using WordMap = std::unordered_map<std::string_view, std::string_view>;

// ---- numbers -------------------------------------------------------------

// Units and suffixes after a number, and currency signs before it.
const WordMap kUnits = {
    {"am", "am"}, {"pm", "pm"}, {"%", "%"}, {"percent", "%"}, {"kb", "kb"}, {"mb", "mb"}, {"gb", "gb"},
    {"tb", "tb"}, {"kib", "kib"}, {"mib", "mib"}, {"gib", "gib"}, {"byte", "b"}, {"bytes", "b"},
    {"ms", "ms"}, {"s", "s"}, {"sec", "s"}, {"secs", "s"}, {"second", "s"}, {"seconds", "s"},
    {"min", "min"}, {"mins", "min"}, {"minute", "min"}, {"minutes", "min"}, {"h", "h"}, {"hr", "h"},
    {"hrs", "h"}, {"hour", "h"}, {"hours", "h"}, {"day", "d"}, {"days", "d"}, {"week", "w"}, {"weeks", "w"},
    {"month", "mo"}, {"months", "mo"}, {"year", "y"}, {"years", "y"}, {"km", "km"}, {"cm", "cm"},
    {"mm", "mm"}, {"mile", "mi"}, {"miles", "mi"}, {"ft", "ft"}, {"feet", "ft"}, {"kg", "kg"}, {"g", "g"},
    {"lb", "lb"}, {"lbs", "lb"}, {"oz", "oz"}, {"ml", "ml"}, {"usd", "usd"}, {"dollar", "usd"},
    {"dollars", "usd"}, {"$", "usd"}, {"eur", "eur"}, {"euro", "eur"}, {"euros", "eur"}, {"€", "eur"},
    {"gbp", "gbp"}, {"£", "gbp"}, {"pounds", "gbp"}, {"¥", "¥"}, {"yen", "jpy"}, {"rmb", "cny"},
    {"元", "cny"}, {"块", "cny"}, {"k", "k"}, {"x", "x"}, {"px", "px"}, {"st", "th"}, {"nd", "th"},
    {"rd", "th"}, {"th", "th"}, {"users", "users"}, {"seats", "seats"}, {"小时", "h"}, {"分钟", "min"},
    {"天", "d"}, {"周", "w"}, {"月", "月"}, {"日", "日"}, {"号", "日"}, {"点", "点"}, {"年", "年"},
    {"岁", "岁"}, {"个", "个"}, {"次", "次"}, {"gigs", "gb"}, {"días", "d"}, {"horas", "h"}};

const WordMap kNumberWords = {
    {"zero", "0"}, {"one", "1"}, {"two", "2"}, {"three", "3"}, {"four", "4"}, {"five", "5"}, {"six", "6"},
    {"seven", "7"}, {"eight", "8"}, {"nine", "9"}, {"ten", "10"}, {"eleven", "11"}, {"twelve", "12"},
    {"fifteen", "15"}, {"twenty", "20"}, {"thirty", "30"}, {"forty", "40"}, {"fifty", "50"},
    {"hundred", "100"}, {"thousand", "1000"}, {"million", "1000000"}, {"billion", "1000000000"},
    {"dozen", "12"}, {"half", "0.5"}, {"twice", "2x"}, {"double", "2x"}, {"triple", "3x"},
    {"first", "1th"}, {"third", "3th"}, {"fourth", "4th"}, {"fifth", "5th"},
    {"dos", "2"}, {"tres", "3"}, {"cuatro", "4"}, {"cinco", "5"}, {"seis", "6"}, {"diez", "10"},
    {"cien", "100"}, {"mil", "1000"}, {"一", "1"}, {"二", "2"}, {"两", "2"}, {"三", "3"}, {"四", "4"},
    {"五", "5"}, {"六", "6"}, {"七", "7"}, {"八", "8"}, {"九", "9"}, {"十", "10"}, {"百", "100"},
    {"千", "1000"}, {"万", "10000"}};

// Dates and times named by words (May is left out: it is also a verb).
const WordSet kDateWords = {
    "january", "february", "march", "april", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow",
    "yesterday", "tonight", "morning", "afternoon", "evening", "noon", "midnight", "weekend", "weekday",
    "next", "last", "previous", "hoy", "mañana", "ayer", "lunes", "martes", "miércoles", "jueves", "viernes",
    "sábado", "domingo", "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
    "septiembre", "octubre", "noviembre", "diciembre", "今天", "明天", "昨天", "后天", "前天", "上午",
    "下午", "早上", "晚上", "中午", "凌晨", "上周", "下周", "本周", "周末"};

// "per minute", "every day".
const WordSet kRateWords = {"per", "each", "every", "por", "cada"};
const WordSet kCurrencySigns = {"$", "€", "£", "¥"};
// 一 before these is "a", "some", "together"..., not a count.
const WordSet kNotCounting = {"下", "些", "起", "直", "样", "定", "般", "切", "致", "共"};

// The date word `word` is, also with a one-letter typo in a long one
// ("tomorow"); "" when none.
std::string date_word(const std::string& word) {
  static const std::vector<std::u32string> kLong = [] {
    std::vector<std::u32string> out;
    for (auto d : kDateWords) {
      if (decode_utf8(d).size() >= 6) out.push_back(decode_utf8(d));
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  if (kDateWords.count(word)) return word;
  const std::u32string w = decode_utf8(word);
  if (w.size() < 6 || w.size() > 11) return "";
  for (const auto& d : kLong) {
    if (within_one_edit(w, d)) {
      std::string out;
      for (char32_t c : d) append_utf8(out, c);
      return out;
    }
  }
  return "";
}

struct Item {
  std::string text;
  bool number = false;
  bool attached = false;  // nothing between it and the item before
};

// "1,000" -> "1000", "1,5" -> "1.5", "3:00" -> "3".
std::string read_number(const std::u32string& s, size_t& i) {
  std::string out;
  while (i < s.size()) {
    const char32_t c = s[i];
    if (is_digit(c)) {
      out.push_back(static_cast<char>(c));
    } else if ((c == ',' || c == '.' || c == ':' || c == '/' || c == '-') && i + 1 < s.size() && is_digit(s[i + 1])) {
      size_t run = 0;
      while (i + 1 + run < s.size() && is_digit(s[i + 1 + run])) ++run;
      if (c != ',' || run != 3) out.push_back(c == ',' ? '.' : static_cast<char>(c));
    } else {
      break;
    }
    ++i;
  }
  if (out.size() > 3 && out.compare(out.size() - 3, 3, ":00") == 0) out.resize(out.size() - 3);
  return out;
}

// Numbers, words (dots inside dropped: "p.m." -> "pm"), one item per Han or
// kana character, currency signs and "%"; the rest separates items.
std::vector<Item> number_items(std::string_view text) {
  const std::u32string s = decode_utf8(nfkc(text, true));
  std::vector<Item> items;
  bool attached = false;
  size_t i = 0;
  while (i < s.size()) {
    const char32_t c = s[i];
    Item item;
    item.attached = attached;
    if (is_digit(c)) {
      item.text = read_number(s, i);
      item.number = true;
    } else if (is_cjk(c) || c == U'%' || utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_SC) {
      item.text = utf8(c);
      ++i;
    } else if (is_letter(c)) {
      while (i < s.size() && !is_cjk(s[i]) &&
             (is_letter(s[i]) || (s[i] == U'.' && i + 1 < s.size() && is_letter(s[i + 1]) && !is_cjk(s[i + 1])))) {
        if (s[i] != U'.') append_utf8(item.text, s[i]);
        ++i;
      }
    } else {
      attached = false;
      ++i;
      continue;
    }
    items.push_back(std::move(item));
    attached = true;
  }
  return items;
}

// The unit after items[i] (a number), if any; advances i past it.
std::string unit_after(const std::vector<Item>& items, size_t& i) {
  if (i + 1 >= items.size() || items[i + 1].number) return "";
  const Item& next = items[i + 1];
  if (i + 2 < items.size() && items[i + 2].attached) {
    const auto two = kUnits.find(next.text + items[i + 2].text);
    if (two != kUnits.end()) {
      i += 2;
      return std::string(two->second);
    }
  }
  const auto unit = kUnits.find(next.text);
  if (unit != kUnits.end()) {
    ++i;
    return std::string(unit->second);
  }
  if (next.attached && !is_cjk(decode_utf8(next.text)[0])) {
    ++i;
    return next.text;  // "10x", "3rd", "v2" stays "2" (the letter is before)
  }
  return "";
}

Words number_tokens(std::string_view text) {
  const std::vector<Item> items = number_items(text);
  Words out;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& item = items[i];
    const auto word = kNumberWords.find(item.text);
    const bool number = item.number || word != kNumberWords.end();
    if (!number) {
      const std::string before = i > 0 ? items[i - 1].text : "";
      const std::string date = date_word(item.text);
      if (!date.empty() && before != "good") out.push_back(date);  // not "good morning"
      if (kRateWords.count(before) && kUnits.count(item.text)) {
        out.push_back("per " + std::string(kUnits.at(item.text)));
      }
      if (i + 1 < items.size() && items[i + 1].attached && kDateWords.count(item.text + items[i + 1].text)) {
        out.push_back(item.text + items[i + 1].text);  // two Han characters: "下午"
      }
      continue;
    }
    if (item.text == "一" && i + 1 < items.size() && kNotCounting.count(items[i + 1].text)) continue;
    std::string token = item.number ? item.text : std::string(word->second);
    std::string currency;
    if (i > 0 && kCurrencySigns.count(items[i - 1].text)) currency = kUnits.at(items[i - 1].text);
    const std::string unit = unit_after(items, i);
    out.push_back(token + (unit.empty() ? currency : unit));
  }
  return out;
}

// ---- negation ------------------------------------------------------------

const WordSet kNegations = {
    "not", "no", "never", "none", "nothing", "nobody", "nowhere", "neither", "nor", "without", "cannot",
    "dont", "doesnt", "didnt", "cant", "couldnt", "wont", "wouldnt", "shouldnt", "isnt", "arent", "wasnt",
    "werent", "hasnt", "havent", "hadnt", "mustnt", "neednt", "aint", "nunca", "jamás", "jamas", "ni",
    "tampoco", "sin", "nada", "nadie", "ninguno", "ninguna", "ningún", "ne", "pas", "jamais", "sans",
    "rien", "aucun", "aucune", "nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals",
    "ohne", "nichts", "não", "nem", "sem", "non", "mai", "senza", "niente"};

// Han words that hold a negation character without negating.
const WordSet kNotNegating = {"非常", "无论", "未来", "别人", "别的", "不过", "无线", "特别", "区别",
                              "差别", "分别", "级别", "类别", "性别", "识别", "告别", "派别"};

// Words with the opposite meaning; a prefix (un-, dis-, de-, non-, in-, im-)
// makes more of them.
const WordMap kOpposites = {
    {"on", "off"}, {"enable", "disable"}, {"enabled", "disabled"}, {"increase", "decrease"},
    {"min", "max"}, {"minimum", "maximum"}, {"upgrade", "downgrade"}, {"before", "after"},
    {"above", "below"}, {"over", "under"}, {"add", "remove"}, {"open", "close"}, {"start", "stop"},
    {"show", "hide"}, {"import", "export"}, {"upload", "download"}, {"allow", "deny"}, {"allow", "block"},
    {"accept", "reject"}, {"accept", "decline"}, {"public", "private"}, {"first", "last"}, {"more", "less"},
    {"higher", "lower"}, {"include", "exclude"}, {"login", "logout"}, {"true", "false"}, {"buy", "sell"},
    {"send", "receive"}, {"incoming", "outgoing"}, {"inbound", "outbound"}, {"ascending", "descending"},
    {"earlier", "later"}, {"early", "late"}, {"always", "never"}, {"success", "failure"}, {"win", "lose"},
    {"renew", "cancel"}, {"join", "leave"}, {"push", "pull"}, {"encrypt", "decrypt"}, {"zoom", "unzoom"},
    {"más", "menos"}, {"antes", "después"}, {"activar", "desactivar"}};
const std::array<std::string_view, 6> kOppositePrefixes = {"un", "dis", "de", "non", "in", "im"};


// The words of `x_words` that `y_words` lacks and that have an opposite in
// `y_words` only: "lock" / "unlock", "on" / "off"; "" when none.
std::string opposite_in(const std::unordered_set<std::string>& x_words, const std::unordered_set<std::string>& y_words) {
  const auto only_y = [&](const std::string& w) { return y_words.count(w) > 0 && x_words.count(w) == 0; };
  for (const auto& x : x_words) {
    if (y_words.count(x)) continue;
    for (const auto& [p, q] : kOpposites) {
      if (x == p && only_y(std::string(q))) return x + " vs " + std::string(q);
    }
    for (auto prefix : kOppositePrefixes) {
      if (only_y(std::string(prefix) + x)) return x + " vs " + std::string(prefix) + x;
    }
  }
  return "";
}

// A word of one normalized message whose opposite is a word of the other
// only; "" when none.
std::string opposites(std::string_view a, std::string_view b) {
  const auto wa = word_set(a), wb = word_set(b);
  std::string found = opposite_in(wa, wb);
  if (found.empty()) found = opposite_in(wb, wa);
  return found;
}

bool is_han_negation(char32_t c) {
  return c == U'不' || c == U'没' || c == U'别' || c == U'未' || c == U'非' || c == U'无';
}

Words negation_cues(std::string_view normalized) {
  Words cues;
  for (const auto& w : split(normalized)) {
    if (kNegations.count(w)) cues.push_back(w);
  }
  const std::u32string s = decode_utf8(normalized);
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_han_negation(s[i])) continue;
    const bool a_not_a = i > 0 && i + 1 < s.size() && s[i - 1] == s[i + 1];  // 能不能, 有没有
    const bool before = i > 0 && kNotNegating.count(utf8(s[i - 1]) + utf8(s[i]));
    const bool after = i + 1 < s.size() && kNotNegating.count(utf8(s[i]) + utf8(s[i + 1]));
    if (!a_not_a && !before && !after) cues.push_back(utf8(s[i]));
  }
  return cues;
}
}  // namespace

GuardVerdict numbers_guard(std::string_view a, std::string_view b) {
  return unless_equal("numbers", "numbers", number_tokens(a), number_tokens(b));
}

GuardVerdict negation_guard(std::string_view a, std::string_view b) {
  const std::string norm_a = normalize(a), norm_b = normalize(b);
  const Words na = negation_cues(norm_a), nb = negation_cues(norm_b);
  if (na.size() != nb.size()) return vetoed("negation", "negation differs: " + joined(na) + " vs " + joined(nb));
  const std::string opposed = opposites(norm_a, norm_b);
  if (!opposed.empty()) return vetoed("negation", "opposites: " + opposed);
  return {};
}

GuardVerdict check_guards(std::string_view a, std::string_view b) {
  for (auto guard : {numbers_guard, negation_guard, entities_guard, language_guard}) {
    GuardVerdict v = guard(a, b);
    if (v.veto) return v;
  }
  return {};
}

}  // namespace reprox::policy::near
