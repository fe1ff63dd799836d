// invocation.cpp: see invocation.h.

#include "invocation.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticDriver.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace clang;

namespace hydra {
namespace {

// DriverDiags keeps the driver's diagnostics: the text of each (for the user, when no invocation
// can be made) and, for those that name a flag GCC takes but Clang does not, that flag.
class DriverDiags : public DiagnosticConsumer {
public:
  explicit DriverDiags(DiagnosticOptions *Opts) : Printer(OS, Opts) {}

  void BeginSourceFile(const LangOptions &LO, const Preprocessor *PP) override {
    Printer.BeginSourceFile(LO, PP);
  }
  void EndSourceFile() override { Printer.EndSourceFile(); }

  void HandleDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(L, Info);
    switch (Info.getID()) {
    case diag::err_drv_unknown_argument:
    case diag::err_drv_unknown_argument_with_suggestion:
    case diag::err_drv_unsupported_opt:
    case diag::err_drv_unsupported_opt_with_suggestion:
      // "unknown argument: '%0'", "unsupported option '%0'": the flag as written.
      if (Info.getNumArgs() > 0 && Info.getArgKind(0) == DiagnosticsEngine::ak_std_string) {
        llvm::SmallString<128> Text;
        Info.FormatDiagnostic(Text);
        Unknown.push_back({Info.getArgStdStr(0), Text.str().str()});
        return; // not an error the user needs: the flag is dropped and the invocation made again
      }
      break;
    }
    Printer.HandleDiagnostic(L, Info);
  }

  std::string text() {
    OS.flush();
    return llvm::StringRef(Buf).trim().str();
  }

  std::vector<DroppedFlag> Unknown;

private:
  std::string Buf;
  llvm::raw_string_ostream OS{Buf};
  TextDiagnosticPrinter Printer;
};

// dropUnknownWarnings removes the -W options Clang does not know from Opts (GCC's -Wlogical-op,
// -Wduplicated-cond…) and returns them. ProcessWarningOptions would report each as "unknown
// warning option", an error under -Werror. The specials (-Werror, -Wno-error=X, -Weverything,
// -Wsystem-headers, -Wfatal-errors…) are kept; their X is checked like a plain group.
std::vector<DroppedFlag> dropUnknownWarnings(DiagnosticOptions &Opts) {
  std::vector<DroppedFlag> Out;
  auto Known = [](llvm::StringRef Opt) {
    Opt.consume_front("no-");
    if (Opt.empty() || Opt == "everything" || Opt == "system-headers" || Opt == "error" ||
        Opt == "fatal-errors" || Opt == "pedantic")
      return true;
    for (llvm::StringRef P : {"error=", "fatal-errors="})
      if (Opt.consume_front(P))
        break;
    return DiagnosticIDs::getGroupForWarningOption(Opt).has_value();
  };
  auto Keep = std::remove_if(Opts.Warnings.begin(), Opts.Warnings.end(), [&](const std::string &W) {
    if (Known(W))
      return false;
    // Clang says nothing of an unknown -Wno-X: drop it silently, as it does.
    if (!llvm::StringRef(W).starts_with("no-"))
      Out.push_back({"-W" + W, "unknown warning option '-W" + W + "' (GCC's, not Clang's)"});
    return true;
  });
  Opts.Warnings.erase(Keep, Opts.Warnings.end());
  return Out;
}

} // namespace

void sanitizeInvocation(CompilerInvocation &Inv) {
  // A syntax-only run, whatever action the flags asked for (-emit-pch, -ast-dump, a plugin's).
  FrontendOptions &FE = Inv.getFrontendOpts();
  FE.ProgramAction = frontend::ParseSyntaxOnly;
  FE.ActionName.clear();
  FE.OutputFile.clear();
  FE.Plugins.clear(); // -fplugin=, -Xclang -load: shared libraries Clang would dlopen
  FE.AddPluginActions.clear();
  FE.PluginArgs.clear();
  FE.LLVMArgs.clear(); // -mllvm: LLVM's own options, some of which write files
  FE.StatsFile.clear();
  FE.ShowStats = false;
  FE.TimeTracePath.clear();
  FE.ModuleFiles.clear(); // serialized ASTs Clang would load
  FE.ModulesEmbedFiles.clear();
  FE.ASTMergeFiles.clear();
  FE.OverrideRecordLayoutsFile.clear();
  FE.MTMigrateDir.clear();
  FE.ARCMTMigrateReportOut.clear();

  // Dependency files, header-include lists and DOT graphs (-MD/-MF/-MJ, -H to a file,
  // -dependency-dot), and /showIncludes.
  DependencyOutputOptions &Dep = Inv.getDependencyOutputOpts();
  Dep.OutputFile.clear();
  Dep.HeaderIncludeOutputFile.clear();
  Dep.DOTOutputFile.clear();
  Dep.ModuleDependencyOutputDir.clear();
  Dep.ShowIncludesDest = ShowIncludesDestination::None;
  Dep.ShowHeaderIncludes = false;
  Dep.Targets.clear();

  // --serialize-diagnostics and -dlog write files.
  DiagnosticOptions &Diag = Inv.getDiagnosticOpts();
  Diag.DiagnosticSerializationFile.clear();
  Diag.DiagnosticLogFile.clear();
  Diag.VerifyDiagnostics = false;

  // Precompiled headers: serialized ASTs Clang would load. `#pragma clang __debug crash` in
  // checked text must not take the session down.
  PreprocessorOptions &PP = Inv.getPreprocessorOpts();
  PP.ImplicitPCHInclude.clear();
  PP.PCHThroughHeader.clear();
  PP.PCHWithHdrStop = false;
  PP.PCHWithHdrStopCreate = false;
  PP.DisablePragmaDebugCrash = true;

  // Modules: a module cache is written (.pcm files, a lock, a timestamp) and prebuilt modules
  // are loaded.
  HeaderSearchOptions &HS = Inv.getHeaderSearchOpts();
  HS.ModuleCachePath.clear();
  HS.ModuleUserBuildPath.clear();
  HS.PrebuiltModuleFiles.clear();
  HS.PrebuiltModulePaths.clear();
  LangOptions &Lang = Inv.getLangOpts();
  Lang.Modules = false;
  Lang.ImplicitModules = false;

  // Files codegen would read; a syntax-only run has no use for them, and Clang stops at once when
  // one is missing (clangd clears them for the same reason).
  Lang.NoSanitizeFiles.clear();
  Lang.XRayAttrListFiles.clear();
  Lang.ProfileListFiles.clear();
  CodeGenOptions &CG = Inv.getCodeGenOpts();
  CG.PassPlugins.clear(); // -fpass-plugin=
  CG.ProfileInstrumentUsePath.clear();
  CG.SampleProfileFile.clear();
  CG.ProfileRemappingFile.clear();
  CG.SaveTempsFilePrefix.clear();
  CG.OptRecordFile.clear();
  CG.StackUsageOutput.clear();
  CG.CoverageDataFile.clear();
  CG.CoverageNotesFile.clear();
}

// dropDriverWriters removes the options the driver itself acts on while it builds the job, before
// any invocation exists to clear: -MJ (Clang::ConstructJob writes the compilation-database entry
// at once, DumpCompilationDatabase), joined or separate.
static void dropDriverWriters(std::vector<std::string> &Flags, std::vector<DroppedFlag> &Dropped) {
  for (size_t I = 0; I < Flags.size();) {
    llvm::StringRef F = Flags[I];
    if (F == "-MJ" || F == "--write-dependencies") {
      size_t N = std::min<size_t>(2, Flags.size() - I);
      std::string Whole = F.str() + (N == 2 ? " " + Flags[I + 1] : "");
      Flags.erase(Flags.begin() + I, Flags.begin() + I + N);
      Dropped.push_back({Whole, "writes a file"});
      continue;
    }
    if (F.starts_with("-MJ")) {
      Dropped.push_back({F.str(), "writes a file"});
      Flags.erase(Flags.begin() + I);
      continue;
    }
    ++I;
  }
}

Invocation makeInvocation(const std::string &ClangPath, const std::string &Dir,
                          std::vector<std::string> Flags, const std::string &File) {
  Invocation Out;
  dropDriverWriters(Flags, Out.Dropped);
  // Each round drops what the last one found; a flag is dropped at most once, so Flags.size()
  // rounds end it.
  for (size_t Round = 0; Round <= Flags.size(); ++Round) {
    std::vector<const char *> Args = {ClangPath.c_str(), "-fsyntax-only", "-iquote", Dir.c_str()};
    for (const std::string &F : Flags)
      Args.push_back(F.c_str());
    Args.push_back(File.c_str());

    auto DiagOpts = llvm::makeIntrusiveRefCnt<DiagnosticOptions>();
    DriverDiags Consumer(DiagOpts.get());
    auto Diags = CompilerInstance::createDiagnostics(DiagOpts.get(), &Consumer, /*ShouldOwnClient=*/false);
    CreateInvocationOptions CIOpts;
    CIOpts.Diags = Diags;
    std::vector<std::string> CC1;
    CIOpts.CC1Args = &CC1;
    std::shared_ptr<CompilerInvocation> Inv = createInvocation(Args, CIOpts);

    if (!Consumer.Unknown.empty()) {
      size_t Before = Flags.size();
      for (const DroppedFlag &D : Consumer.Unknown) {
        auto It = std::find(Flags.begin(), Flags.end(), D.Flag);
        if (It != Flags.end()) {
          Flags.erase(It);
          Out.Dropped.push_back(D);
        }
      }
      if (Flags.size() < Before)
        continue; // made again without them
    }
    if (!Inv || Diags->hasErrorOccurred()) {
      Out.Error = Consumer.text();
      if (Out.Error.empty())
        Out.Error = "the clang driver made no compile job of them";
      return Out;
    }
    for (DroppedFlag &D : dropUnknownWarnings(Inv->getDiagnosticOpts()))
      Out.Dropped.push_back(std::move(D));
    sanitizeInvocation(*Inv);
    Out.Inv = std::move(Inv);
    return Out;
  }
  Out.Error = "the clang driver made no compile job of them";
  return Out;
}

} // namespace hydra
