// A kernel's may_take (runtime/kernel.h): a candidate that says no is passed over without being
// constructed, one that says yes is constructed and may still refuse, and the last candidate is
// always constructed, so its error is the one reported.
#include <gtest/gtest.h>

#include "runtime/kernel.h"

namespace polyinfer {
namespace {

int constructed[3] = {0, 0, 0};

// A node whose attribute "takes" names the candidate (0-2) that accepts it; may_take answers
// from "precheck", a bit per candidate.
class StubInfo final : public KernelInfo {
 public:
  StubInfo(int takes, int precheck) {
    node_.op_type = "Stub";
    node_.name = "stub";
    node_.attrs["takes"].type = ir::Attribute::Type::Int;
    node_.attrs["takes"].i = takes;
    node_.attrs["precheck"].type = ir::Attribute::Type::Int;
    node_.attrs["precheck"].i = precheck;
  }
  const ir::Node& node() const override { return node_; }
  const Tensor* constant_input(size_t) const override { return nullptr; }
  const ir::TypeInfo* input_type(size_t) const override { return nullptr; }
  const ir::TypeInfo* output_type(size_t) const override { return nullptr; }
  std::unique_ptr<SubgraphRunner> subgraph(const std::string&) const override { return nullptr; }
  int threads() const override { return 1; }

 private:
  ir::Node node_;
};

template <int I>
class Candidate final : public Kernel {
 public:
  static bool may_take(const KernelInfo& info) { return (info.attr_int("precheck") >> I) & 1; }
  explicit Candidate(const KernelInfo& info) {
    ++constructed[I];
    if (info.attr_int("takes") != I) info.unsupported("candidate " + std::to_string(I));
  }
  void run(KernelContext&) override {}
  std::string impl() const override { return "candidate " + std::to_string(I); }
};

class Plain final : public Kernel {  // no may_take: always constructed
 public:
  explicit Plain(const KernelInfo& info) {
    if (info.attr_int("takes") != 2) info.unsupported("plain");
  }
  void run(KernelContext&) override {}
  std::string impl() const override { return "plain"; }
};

static_assert(precheck_of<Candidate<0>>() != nullptr);
static_assert(precheck_of<Plain>() == nullptr);

std::vector<KernelDef> defs() {
  return {{"test", "", "Stub", 1, 1, &make_kernel<Candidate<0>>, KernelTier::Specialized,
           precheck_of<Candidate<0>>()},
          {"test", "", "Stub", 1, 1, &make_kernel<Candidate<1>>, KernelTier::Specialized,
           precheck_of<Candidate<1>>()},
          {"test", "", "Stub", 1, 1, &make_kernel<Plain>, KernelTier::Reference,
           precheck_of<Plain>()}};
}

std::string pick(int takes, int precheck) {
  const std::vector<KernelDef> d = defs();
  const std::vector<const KernelDef*> order = {&d[0], &d[1], &d[2]};
  for (int& c : constructed) c = 0;
  return make_first_taker(order, StubInfo(takes, precheck))->impl();
}

TEST(KernelPrecheck, ACandidateThatSaysNoIsNotConstructed) {
  // Candidate 0 says no, candidate 1 yes and takes it.
  EXPECT_EQ(pick(1, 0b10), "candidate 1");
  EXPECT_EQ(constructed[0], 0);
  EXPECT_EQ(constructed[1], 1);
  // Both say no: the last one (no precheck) takes it without either being constructed.
  EXPECT_EQ(pick(2, 0b00), "plain");
  EXPECT_EQ(constructed[0], 0);
  EXPECT_EQ(constructed[1], 0);
}

TEST(KernelPrecheck, ACandidateThatSaysYesMayStillRefuse) {
  EXPECT_EQ(pick(2, 0b11), "plain");
  EXPECT_EQ(constructed[0], 1);
  EXPECT_EQ(constructed[1], 1);
}

TEST(KernelPrecheck, TheLastCandidatesRefusalIsTheError) {
  // Takes 3: nobody; the last one's UnsupportedOp comes out.
  try {
    pick(3, 0b00);
    FAIL() << "expected UnsupportedOp";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UnsupportedOp);
    EXPECT_NE(std::string(e.what()).find("plain"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyinfer
