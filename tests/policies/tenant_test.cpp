#include <gtest/gtest.h>

#include "policies/tenant.hpp"

namespace reprox::policy {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view("a\0b", 3)), sha256_hex(std::string("a\0b", 3)));
  EXPECT_NE(sha256_hex(std::string_view("a\0b", 3)), sha256_hex("a"));
}

TEST(TenantOf, HashesTheBearerToken) {
  const std::string abc = sha256_hex("abc");
  EXPECT_EQ(tenant_of("Bearer abc"), abc);
  EXPECT_EQ(tenant_of("bearer abc"), abc);
  EXPECT_EQ(tenant_of("BEARER   abc  "), abc);
  EXPECT_EQ(tenant_of("  Bearer\tabc"), abc);
  EXPECT_NE(tenant_of("Bearer abd"), abc);
}

TEST(TenantOf, EmptyWhenNoToken) {
  EXPECT_EQ(tenant_of(""), "");
  EXPECT_EQ(tenant_of("   "), "");
  EXPECT_EQ(tenant_of("Bearer"), "");
  EXPECT_EQ(tenant_of("Bearer   "), "");
}

TEST(TenantOf, OtherSchemesAreHashedWhole) {
  EXPECT_EQ(tenant_of("Basic dXNlcjpwYXNz"), sha256_hex("Basic dXNlcjpwYXNz"));
  EXPECT_EQ(tenant_of("Bearerabc"), sha256_hex("Bearerabc"));  // not the Bearer scheme
  EXPECT_NE(tenant_of("Basic a"), tenant_of("Basic b"));
}

}  // namespace
}  // namespace reprox::policy
