// JSONL import errors: every malformed or inconsistent input is InvalidArgument naming its line
// (format/jsonl.h).
#include <string>

#include "absl/strings/str_cat.h"
#include "format/internal/jsonl_test_util.h"
#include "format/jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using jsonl_testing::ErrorCb;
using jsonl_testing::ExpectError;
using jsonl_testing::Flush;
using jsonl_testing::MustParse;
using ::testing::StartsWith;

// ---- Errors, each with its line -----------------------------------------------------------

TEST(JsonlErrorTest, UnknownFunction) {
  ExpectError(Flush(1, 1) + R"({"seq":2,"tid":1,"fn":"NoSuchDdi","args":{}})",
              "line 2: ", "unknown function \"NoSuchDdi\"");
}

TEST(JsonlErrorTest, PfnPrefixGetsAHint) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"pfnFlush","args":{"hDevice":"d"}})",
              "line 1: ", "write \"Flush\", without \"pfn\"");
}

TEST(JsonlErrorTest, MissingRequiredHandle) {
  ExpectError(Flush(1, 1) + Flush(2, 1) +
                  R"({"seq":3,"tid":1,"fn":"CommandListExecute","args":{"hDevice":"d"}})",
              "line 3: ", "missing required argument \"hCommandList\"");
}

TEST(JsonlErrorTest, MissingRequiredHandleInsideAStructure) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CreateDeferredContext","args":{"hDevice":"d","hDrvContext":"dc"}})",
      "line 1: ", "missing required argument \"hRTCoreLayer\"");
}

TEST(JsonlErrorTest, ExplicitNullSatisfiesARequiredHandle) {
  JsonlTrace t = MustParse(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":null}})");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].args[0], 0u);
}

TEST(JsonlErrorTest, RepeatedSeq) {
  ExpectError(Flush(5, 1) + Flush(5, 1),
              "line 2: ", "seq 5 is not greater than the previous line's seq 5");
}

TEST(JsonlErrorTest, DecreasingSeqCountsBlankLines) {
  ExpectError(Flush(5, 1) + "\n   \n" + Flush(4, 1),
              "line 4: ", "seq 4 is not greater than the previous line's seq 5");
}

TEST(JsonlErrorTest, MalformedJsonUnterminated) {
  ExpectError(Flush(1, 1) + R"({"seq":2,"tid":1)", "line 2: column 17: malformed JSON",
              "expected ',' or '}'");
}

TEST(JsonlErrorTest, MalformedJsonUnquotedKey) {
  // protobuf's parser alone would accept this.
  ExpectError(R"({seq:1,"tid":1,"fn":"Flush","args":{"hDevice":"d"}})",
              "line 1: column 2: malformed JSON", "expected a quoted key");
}

TEST(JsonlErrorTest, MalformedJsonTrailingComma) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},})",
              "line 1: column 54: malformed JSON", "expected a quoted key");
}

TEST(JsonlErrorTest, MalformedJsonBadEscape) {
  // protobuf would silently turn "\q" into "q": a different handle token.
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"a\q"}})",
              "line 1: column 52: malformed JSON", "invalid escape \\q");
}

TEST(JsonlErrorTest, MalformedJsonTrailingText) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"}} {})",
              "line 1: column 55: malformed JSON", "unexpected text after the object");
}

TEST(JsonlErrorTest, MalformedJsonNotAnObject) {
  ExpectError("[1,2]", "line 1: column 1: malformed JSON", "one JSON object");
}

TEST(JsonlErrorTest, MalformedJsonInvalidUtf8) {
  ExpectError("{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"\xff\"}}",
              "line 1: column 50: malformed JSON", "not valid UTF-8");
}

TEST(JsonlErrorTest, MalformedJsonDuplicateKeyInsideArgs) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d","hDevice":"e"}})",
              "line 1: malformed JSON", "duplicate key 'hDevice'");
}

TEST(JsonlErrorTest, HostileNestingIsRefusedWithItsColumnAndNoRecursion) {
  // Deep enough to overflow a recursive parser's stack; the parser is iterative and the
  // checker that words the error stops at its depth limit.
  std::string open(200000, '[');
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":)" + open, "line 1: column",
              "nesting too deep");
  std::string balanced = std::string(40, '[') + std::string(40, ']');
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":)" + balanced + "}}",
              "line 1: column", "nesting too deep");
}

TEST(JsonlErrorTest, NegativeIntegerBeyond2To53KeepsItsColumn) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},"parent":-9007199254740993})",
              "line 1: column 63: integer -9007199254740993 is beyond 2^53",
              "write it as a string");
}

TEST(JsonlErrorTest, MalformedJsonDuplicateKey) {
  ExpectError(R"({"seq":1,"seq":2,"tid":1,"fn":"Flush","args":{"hDevice":"d"}})",
              "line 1: malformed JSON", "'seq'");
}

TEST(JsonlErrorTest, UnknownArgumentName) {
  ExpectError(
      Flush(1, 1) +
          R"({"seq":2,"tid":1,"fn":"CommandListExecute","args":{"hDevice":"d","hCommandList":"c","hCommandLst":"c"}})",
      "line 2: ",
      "unknown argument \"hCommandLst\" (did you mean \"hCommandList\"?) in CommandListExecute "
      "args");
}

TEST(JsonlErrorTest, UnknownMemberInArrayElement) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHandleSize":[{"HandleType":1,"Size":4}]}})",
      "line 1: ", "unknown argument \"Size\" in pHandleSize[0]");
}

TEST(JsonlErrorTest, UnknownTopLevelKey) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},"parnet":3})",
              "line 1: ", "unknown key \"parnet\"");
}

TEST(JsonlErrorTest, SeveralUnknownTopLevelKeysNameTheFirstInSortedOrder) {
  // The message must not depend on the parser's map order.
  for (int i = 0; i < 20; ++i) {
    ExpectError(
        R"({"seq":1,"tid":1,"zeta":0,"fn":"Flush","beta":1,"args":{"hDevice":"d"},"mid":3})",
        "line 1: ", "unknown key \"beta\"");
  }
}

TEST(JsonlErrorTest, BadEnumName) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":"D3D11DDI_HT_NOPE"}})",
      "line 1: ", "\"HandleType\": unknown D3D11DDI_HANDLETYPE name \"D3D11DDI_HT_NOPE\"");
}

TEST(JsonlErrorTest, BadFlagNameInAnOrList) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"d","Flags":"D3D11DDI_CREATEDEVICE_FLAG_SINGLETHREADED|NOPE"}})",
      "line 1: ", "unknown D3D10DDI_CREATEDEVICE_FLAGS name");
}

TEST(JsonlErrorTest, BadHresultName) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"SetErrorCb","args":{"hRuntimeDevice":"r","hResult":"E_NOPE"}})",
      "line 1: ", "\"hResult\": unknown name \"E_NOPE\"");
}

TEST(JsonlErrorTest, IntegerTooLargeForJson) {
  ExpectError(Flush(9007199254740993, 1),
              "line 1: column 8: integer 9007199254740993 is beyond 2^53", "write it as a string");
}

TEST(JsonlErrorTest, IntegerTooLargeInArgs) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"GetSupportedVersions","args":{"hAdapter":"a","pSupportedDDIInterfaceVersions":[18446744073709551615]}})",
      "line 1: column 103: integer 18446744073709551615 is beyond 2^53", "");
}

TEST(JsonlErrorTest, ExponentIntegerTooLarge) {
  ExpectError(R"({"seq":1e17,"tid":1,"fn":"Flush","args":{"hDevice":"d"}})",
              "line 1: ", "\"seq\" is beyond 2^53");
}

TEST(JsonlErrorTest, NonIntegerSeq) {
  ExpectError(R"({"seq":1.5,"tid":1,"fn":"Flush","args":{"hDevice":"d"}})",
              "line 1: ", "\"seq\" must be an integer");
}

TEST(JsonlErrorTest, ValueOutOfRange) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Draw","args":{"hDevice":"d","VertexCount":-1}})",
              "line 1: ", "\"VertexCount\" = -1 is out of range [0, 4294967295]");
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"DrawIndexed","args":{"hDevice":"d","BaseVertexLocation":2147483648}})",
      "line 1: ", "\"BaseVertexLocation\" = 2147483648 is out of range");
}

TEST(JsonlErrorTest, MissingTopLevelKeys) {
  ExpectError(R"({"tid":1,"fn":"Flush","args":{"hDevice":"d"}})", "line 1: ", "missing \"seq\"");
  ExpectError(R"({"seq":1,"fn":"Flush","args":{"hDevice":"d"}})", "line 1: ", "missing \"tid\"");
  ExpectError(R"({"seq":1,"tid":1,"args":{"hDevice":"d"}})", "line 1: ", "missing \"fn\"");
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush"})", "line 1: ", "missing \"args\"");
}

TEST(JsonlErrorTest, RetOnVoidFunction) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Draw","args":{"hDevice":"d"},"ret":"S_OK"})",
              "line 1: ", "Draw returns void; remove \"ret\"");
}

TEST(JsonlErrorTest, RetOnCallThatNeverReturned) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"RecycleDestroyCommandList","args":{"hDevice":"d","hCommandList":"c"},"end":null,"ret":1})",
      "line 1: ", "never returned");
}

TEST(JsonlErrorTest, MemberOfNullPointer) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"d","pCreateCommandList":null,"hDeferredContext":"dc","hCommandList":"c","hRTCommandList":"r"}})",
      "line 1: ", "\"hDeferredContext\" is a member of \"pCreateCommandList\", which is null");
}

TEST(JsonlErrorTest, NestedStructureInsteadOfFlattened) {
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"d","pCreateCommandList":{"hDeferredContext":"dc"},"hCommandList":"c","hRTCommandList":"r"}})",
      "line 1: ", "members of \"pCreateCommandList\" are written directly in \"args\"");
}

TEST(JsonlErrorTest, HandleMustBeAString) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":5}})",
              "line 1: ", "\"hDevice\" must be a handle token string or null, not a number");
}

TEST(JsonlErrorTest, EndNotAfterSeq) {
  ExpectError(Flush(3, 1, R"(,"end":3)"), "line 1: ", "end 3 is not after seq 3");
}

TEST(JsonlErrorTest, EndIsAlsoALaterSeq) {
  ExpectError(Flush(1, 1, R"(,"end":3)") + Flush(2, 2) + Flush(3, 3),
              "line 3: ", "seq 3 is also the end of seq 1 (line 1)");
}

TEST(JsonlErrorTest, EndUsedTwice) {
  ExpectError(Flush(1, 1, R"(,"end":5)") + Flush(2, 2, R"(,"end":5)") + Flush(9, 3),
              "line 3: ", "end 5 is used twice");
}

TEST(JsonlErrorTest, ParentNotInFlight) {
  ExpectError(
      Flush(1, 1, R"(,"end":2)") + ErrorCb(3, 1, 1), "line 2: ",
      "parent 1 is not a call in flight on thread 1 (innermost call in flight there: none)");
}

TEST(JsonlErrorTest, ParentOnAnotherThread) {
  ExpectError(Flush(1, 1) + ErrorCb(2, 2, 1),
              "line 2: ", "parent 1 is not a call in flight on thread 2");
}

TEST(JsonlErrorTest, SameThreadOverlapWithoutParent) {
  ExpectError(Flush(1, 1, R"(,"end":10)") + Flush(2, 1), "line 2: ",
              "seq 2 is entered on thread 1 while seq 1 (line 1) is in flight there until 10");
}

TEST(JsonlErrorTest, NestedCallReturnsAfterItsParent) {
  ExpectError(Flush(1, 1, R"(,"end":5)") + ErrorCb(2, 1, 1, R"(,"end":7)") + Flush(9, 1),
              "line 2: ", "end 7 is after the end of its parent, seq 1 (line 1): 5");
}

TEST(JsonlErrorTest, NestedCallReturnsAfterItsParentsEndIsPassed) {
  // Nested in a nested call: only seen when seq 1's end passes with seq 3 still in flight.
  ExpectError(Flush(1, 1, R"(,"end":8)") + ErrorCb(2, 1, 1) +
                  Flush(3, 1, R"(,"parent":2,"end":9)") + Flush(20, 1),
              "line 4: ",
              "seq 3 (line 3) returns at 9, after seq 1 (line 1), which it was made "
              "inside, returns at 8");
}

TEST(JsonlErrorTest, InconsistentEndsFoundAtTheEndOfInput) {
  ExpectError(Flush(1, 1, R"(,"end":8)") + ErrorCb(2, 1, 1) + Flush(3, 1, R"(,"parent":2,"end":9)"),
              "end of input (after line 3): ", "seq 3 (line 3) returns at 9");
}

TEST(JsonlErrorTest, ThreadLeavesACallThatNeverReturned) {
  ExpectError(Flush(1, 1, R"(,"end":null)") + Flush(2, 1),
              "line 2: ", "outside seq 1 (line 1), which never returned");
}

TEST(JsonlErrorTest, ParentReturnsWhileNestedCallNeverDoes) {
  ExpectError(Flush(1, 1, R"(,"end":5)") + ErrorCb(2, 1, 1, R"(,"end":null)"), "line 2: ",
              "this call never returns (end null) but its parent, seq 1 (line 1), returns at 5");
}

TEST(JsonlErrorTest, ErrorIsSticky) {
  JsonlDecoder d;
  EXPECT_FALSE(d.AddLine("{").ok());
  absl::Status again = d.AddLine(Flush(1, 1));
  EXPECT_THAT(std::string(again.message()), StartsWith("line 1: "));
  EXPECT_FALSE(d.Finish().ok());
}

}  // namespace
}  // namespace cltrace::format
