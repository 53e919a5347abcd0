// Near-duplicate guards, as tables: each guard vetoes pairs whose meaning
// differs and lets through pairs that differ in case, whitespace,
// punctuation, a letter or two, or fillers.
#include <gtest/gtest.h>

#include "policies/near_guards.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy::near {
namespace {

struct GuardCase {
  const char* a;
  const char* b;
  bool veto;
  const char* why_part;  // in the verdict's `why` when vetoed
};

using Guard = GuardVerdict (*)(std::string_view, std::string_view);

void expect_case(Guard guard, const char* name, const GuardCase& c) {
  const GuardVerdict v = guard(c.a, c.b);
  EXPECT_EQ(v.veto, c.veto) << c.a << " / " << c.b << ": " << v.why;
  if (c.veto) {
    EXPECT_EQ(v.guard, name);
    EXPECT_NE(v.why.find(c.why_part), std::string::npos) << v.why;
  } else {
    EXPECT_EQ(v.guard, "");
    EXPECT_EQ(v.why, "");
  }
  EXPECT_EQ(guard(c.b, c.a).veto, c.veto) << "symmetric";
}

std::string case_name(const ::testing::TestParamInfo<GuardCase>& info) {
  return testing_support::case_name(info.index, std::string(info.param.veto ? "veto_" : "pass_") + info.param.b);
}

const GuardCase kNumberCases[] = {
    {"Can I get a refund for 100 USD?", "Can I get a refund for 1000 USD?", true, "100usd vs 1000usd"},
    {"Is it open at 3 pm?", "Is it open at 3 am?", true, "3pm vs 3am"},
    {"Why was I charged $50?", "Why was I charged €50?", true, "50usd vs 50eur"},
    {"Move it to March 5", "Move it to April 5", true, "march 5 vs april 5"},
    {"Is the limit 2 GB?", "Is the limit 2 MB?", true, "2gb vs 2mb"},
    {"Pause it for three days", "Pause it for 3 weeks", true, "3d vs 3w"},
    {"Can I book for today?", "Can I book for tomorrow?", true, "today vs tomorrow"},
    {"预订下午3点", "预订上午3点", true, "下午"},
    {"Shift from 3 to 5", "Shift from 5 to 3", true, "3 5 vs 5 3"},
    {"100 requests per minute", "100 requests per second", true, "per min vs 100 per s"},
    {"Version 1.5 please", "Version 15 please", true, "1.5 vs 15"},
    {"Back it up every day", "Back it up every week", true, "per d vs per w"},
    {"Is it 1,000 users?", "Is it 1000 users?", false, ""},
    {"Is it open at 3pm?", "is it open at 3 PM", false, ""},
    {"Call me at 3 p.m.", "Call me at 3pm", false, ""},
    {"Is the limit 10GB?", "is the limit 10 gb", false, ""},
    {"Pause it for three days", "Pause it for 3 days", false, ""},
    {"Meet at 3:00 pm", "Meet at 3 pm", false, ""},
    {"Good morning, is the shop open?", "Is the shop open?", false, ""},
    {"How do I reset my password?", "how do i reset my pasword", false, ""},
    {"Refund ＄１００", "Refund $100", false, ""},
    {"Why was I charged $20?", "why was I charged 20 dollars", false, ""},
    {"退款需要三天吗", "退款需要3天吗", false, ""},
    {"Can I book for tomorrow?", "can i book for tomorow", false, ""},
    {"Pause it for a month", "Pause it for a moth", false, ""},
};

class NearNumbersGuard : public ::testing::TestWithParam<GuardCase> {};
TEST_P(NearNumbersGuard, Table) { expect_case(numbers_guard, "numbers", GetParam()); }
INSTANTIATE_TEST_SUITE_P(Table, NearNumbersGuard, ::testing::ValuesIn(kNumberCases), case_name);

const GuardCase kNegationCases[] = {
    {"I can log in", "I can't log in", true, "(none) vs cant"},
    {"Do I need a card?", "Do I not need a card?", true, "not"},
    {"I received the email", "I never received the email", true, "never"},
    {"Share it with edit access", "Share it without edit access", true, "without"},
    {"为什么我能登录", "为什么我不能登录", true, "不"},
    {"我收到了邮件", "我没有收到邮件", true, "没"},
    {"¿Por qué puedo entrar?", "¿Por qué no puedo entrar?", true, "no"},
    {"¿Puedo pagar con tarjeta?", "¿Puedo pagar sin tarjeta?", true, "sin"},
    {"How do I lock my screen?", "How do I unlock my screen?", true, "lock vs unlock"},
    {"How do I enable sync?", "How do I disable sync?", true, "enable vs disable"},
    {"Turn notifications on", "Turn notifications off", true, "on vs off"},
    {"I can't log in", "I cannot log in", false, ""},
    {"I don't want emails", "I do not want emails", false, ""},
    {"I don’t want emails", "I dont want emails", false, ""},
    {"能不能帮我重置密码", "能不能帮我重置密码？", false, ""},
    {"这个非常好用", "这个很好用", false, ""},
    {"别人能看到我的文件吗", "别人能看到我的文件吗？", false, ""},
    {"Why is it NOT working?", "why is it not working", false, ""},
    {"How do I turn off notifcations?", "How do I turn off notifications?", false, ""},
    {"Turn it on and off again", "turn it on and off again please", false, ""},
};

class NearNegationGuard : public ::testing::TestWithParam<GuardCase> {};
TEST_P(NearNegationGuard, Table) { expect_case(negation_guard, "negation", GetParam()); }
INSTANTIATE_TEST_SUITE_P(Table, NearNegationGuard, ::testing::ValuesIn(kNegationCases), case_name);

const GuardCase kEntityCases[] = {
    {"How do I connect my Google Calendar?", "How do I connect my Outlook Calendar?", true, "Google"},
    {"Does the user_id field accept strings?", "Does the account_id field accept strings?", true, "user_id"},
    {"Why does getUserName return null?", "Why does getUserId return null?", true, "getUserName"},
    {"What does 'quota exceeded' mean?", "What does 'quota reset' mean?", true, "quota exceeded"},
    {"Is https://example.com/status down?", "Is https://example.org/status down?", true, "example.com"},
    {"Send it to anna@example.com", "Send it to hanna@example.com", true, "anna@example.com"},
    {"Alice owes Bob 20 dollars", "Bob owes Alice 20 dollars", true, "other order"},
    {"Transfer money from savings to checking", "Transfer money from checking to savings", true, "other order"},
    {"Can I deploy it to AWS?", "Can I deploy it to GCP?", true, "AWS"},
    {"How do I call os.path.join?", "How do I call os.path.split?", true, "os.path.join"},
    {"Can I redirect http to https?", "Can I redirect https to http?", true, "other order"},
    {"Should the manager approve the employee's request?", "Should the employee approve the manager's request?",
     true, "other order"},
    {"HOW DO I DEPLOY TO AWS?", "how do I deploy to AWS", false, ""},
    {"How Do I Connect My Google Calendar?", "how do i connect my google calendar", false, ""},
    {"What does 'quota exceeded' mean?", "what does quota exceeded mean", false, ""},
    {"Please reset my password", "please reset my password", false, ""},
    {"Is Kubernetes supported?", "Is Kubernets supported?", false, ""},
    {"Please can you tell me how to export?", "Can you please tell me how to export?", false, ""},
    {"Where is Alice's invoice?", "where is alice's invoice", false, ""},
    {"Can I use it on my iPhone?", "can i use it on my iphone", false, ""},
    {"Quick question: How do I export?", "How do I export? Quick question", false, ""},
    {"Copy the file, rename the copy, then copy the file back", "Copy the file, rename the copy, then the file back",
     false, ""},
};

class NearEntitiesGuard : public ::testing::TestWithParam<GuardCase> {};
TEST_P(NearEntitiesGuard, Table) { expect_case(entities_guard, "entities", GetParam()); }
INSTANTIATE_TEST_SUITE_P(Table, NearEntitiesGuard, ::testing::ValuesIn(kEntityCases), case_name);

const GuardCase kLanguageCases[] = {
    {"How do I reset my password?", "Как сбросить мой пароль?", true, "Latin vs Cyrillic"},
    {"How do I reset my password?", "如何重置我的密码？", true, "Latin vs Han"},
    {"如何重置密码？", "パスワードをリセットするには？", true, "Han vs Japanese"},
    {"Password reset", "إعادة تعيين كلمة المرور", true, "Latin vs Arabic"},
    {"비밀번호 재설정", "パスワードのリセット", true, "Hangul vs Japanese"},
    {"Where is my order?", "¿Dónde está mi pedido?", true, "en vs es"},
    {"¿Cómo puedo cambiar mi contraseña?", "Como posso alterar a minha senha?", true, "es vs pt"},
    {"How can I change my password?", "Comment puis-je changer mon mot de passe ?", true, "en vs fr"},
    {"How can I change my password?", "Wie kann ich mein Passwort ändern?", true, "en vs de"},
    {"How do I reset my password?", "how do i reset my pasword", false, ""},
    {"如何重置我的密码？", "如何重置我的密码", false, ""},
    {"How do I pay with 微信?", "how do i pay with 微信", false, ""},
    {"OK", "ok", false, ""},
    {"¿Cómo puedo cambiar mi contraseña?", "como puedo cambiar mi contrasena", false, ""},
    {"Comment puis-je annuler mon abonnement ?", "comment puis-je annuler mon abonnement", false, ""},
    {"Kubernetes pricing", "kubernetes pricing", false, ""},
    {"123", "123", false, ""},
};

class NearLanguageGuard : public ::testing::TestWithParam<GuardCase> {};
TEST_P(NearLanguageGuard, Table) { expect_case(language_guard, "language", GetParam()); }
INSTANTIATE_TEST_SUITE_P(Table, NearLanguageGuard, ::testing::ValuesIn(kLanguageCases), case_name);

TEST(NearGuards, FirstVetoInOrder) {
  const GuardVerdict v = check_guards("Why can't I pay 100 USD to Alice?", "Why can I pay 1000 USD to Bob?");
  EXPECT_TRUE(v.veto);
  EXPECT_EQ(v.guard, "numbers");
  EXPECT_EQ(check_guards("Why can't I pay Alice?", "Why can I pay Bob?").guard, "negation");
  EXPECT_EQ(check_guards("Can I pay Alice?", "Can I pay Bob?").guard, "entities");
  EXPECT_EQ(check_guards("Password reset", "Сброс пароля").guard, "language");
}

TEST(NearGuards, NearDuplicatesPass) {
  const char* pairs[][2] = {
      {"How do I reset my password?", "hey, how do i reset my pasword please"},
      {"Can I get a refund for 100 USD after 10 days?", "can i get a refund for 100 usd after 10 days??"},
      {"Quick question: why can't Alice see the 'Q3 report'?", "Why can't Alice see the Q3 report?"},
      {"", ""},
  };
  for (const auto& p : pairs) {
    const GuardVerdict v = check_guards(p[0], p[1]);
    EXPECT_FALSE(v.veto) << p[0] << " / " << p[1] << ": " << v.guard << ": " << v.why;
  }
}

}  // namespace
}  // namespace reprox::policy::near
