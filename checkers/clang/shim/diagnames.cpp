// diagnames.cpp: diagnostic names from Clang's own tables, and their classes (diagnames.h).

#include "diagnames.h"

#include "clang/Basic/AllDiagnostics.h"
#include "clang/Basic/DiagnosticIDs.h"

#include <initializer_list>

using namespace clang;

namespace hydra {

namespace {

struct DiagName {
  unsigned ID;
  const char *Name;
};

// kDiagNames maps diagnostic ids to their enumerator names (err_undeclared_var_use, …), built from
// Clang's own .inc tables, so that categories follow Clang's naming rather than message text.
const DiagName kDiagNames[] = {
#define DIAG(ENUM, ...) {diag::ENUM, #ENUM},
#include "clang/Basic/DiagnosticASTKinds.inc"
#include "clang/Basic/DiagnosticCommonKinds.inc"
#include "clang/Basic/DiagnosticFrontendKinds.inc"
#include "clang/Basic/DiagnosticLexKinds.inc"
#include "clang/Basic/DiagnosticParseKinds.inc"
#include "clang/Basic/DiagnosticSemaKinds.inc"
#include "clang/Basic/DiagnosticAnalysisKinds.inc"
#undef DIAG
};

bool startsWithAny(llvm::StringRef S, std::initializer_list<const char *> Prefixes) {
  for (const char *P : Prefixes)
    if (S.starts_with(P))
      return true;
  return false;
}

} // namespace

llvm::StringRef diagName(unsigned ID) {
  for (const DiagName &D : kDiagNames)
    if (D.ID == ID)
      return D.Name;
  return "";
}

const char *categorize(DiagnosticsEngine::Level L, unsigned ID, llvm::StringRef Name) {
  if (L == DiagnosticsEngine::Fatal || Name == "err_pp_file_not_found")
    return "fatal";
  if (startsWithAny(Name, {"err_undeclared_var_use", "err_undeclared_use", "err_unknown_typename",
                           "ext_implicit_function_decl", "err_implicit_function_decl",
                           "ext_implicit_lib_function_decl", "err_no_template",
                           "err_unknown_type_or_class_name", "err_undeclared_label_use",
                           "err_unknown_nested_typename_suggest", "err_undeclared_destructor"}))
    return "undeclared_identifier";
  if (startsWithAny(Name, {"err_no_member", "err_typecheck_member_reference_struct_union",
                           "err_no_suitable_member"}))
    return "no_member";
  if (startsWithAny(Name, {"err_typecheck_call_too_few_args", "err_typecheck_call_too_many_args",
                           "err_ovl_no_viable_function_in_call_arity"}))
    return "wrong_argument_count";
  if (startsWithAny(Name, {"err_redefinition", "err_conflicting_types", "err_duplicate_member",
                           "err_member_redeclared", "err_ovl_diff_return_type",
                           "err_conflicting_overriding_cc_attributes"}))
    return "redefinition";
  if (startsWithAny(Name, {"warn_falloff_nonvoid", "err_falloff_nonvoid", "ext_return_missing_expr",
                           "err_return_missing_expr", "warn_maybe_falloff_nonvoid",
                           "err_maybe_falloff_nonvoid"}))
    return "missing_return";
  if (startsWithAny(Name, {"err_typecheck_convert_", "ext_typecheck_convert_",
                           "warn_typecheck_convert_", "err_typecheck_nonviable_condition",
                           "err_ovl_no_viable_conversion", "err_init_conversion_failed",
                           "err_typecheck_invalid_operands", "err_ovl_no_viable_oper",
                           "err_ovl_no_viable_function_in_call",
                           "err_ovl_no_viable_member_function_in_call",
                           "err_ovl_no_viable_function_in_init", "err_ovl_no_conversion_in_cast",
                           "err_typecheck_cond_incompatible_operands", "err_bad_cxx_cast",
                           "err_reference_bind_failed", "err_lvalue_reference_bind_to",
                           "err_typecheck_converted_constant_expression",
                           "err_cannot_initialize", "err_typecheck_subscript_value",
                           "err_typecheck_indirection_requires_pointer",
                           "err_typecheck_call_not_function", "err_return_in_constructor",
                           "err_typecheck_incompatible"}))
    return "type_mismatch";
  if (Name.starts_with("err_expected"))
    return "syntax";
  unsigned Cat = DiagnosticIDs::getCategoryNumberForDiag(ID);
  llvm::StringRef CatName = DiagnosticIDs::getCategoryNameFromID(Cat);
  if (CatName == "Parse Issue")
    return "syntax";
  if (CatName == "Lexical or Preprocessor Issue" && !Name.starts_with("err_pp_") &&
      !Name.starts_with("pp_"))
    return "syntax";
  return "other";
}

} // namespace hydra
