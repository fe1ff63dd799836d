// rootedfs.cpp: RootedFS, the file system of a session (rootedfs.h).

#include "rootedfs.h"
#include "stream.h"

#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace clang;

namespace hydra {

namespace {

// RootedFS is the real file system cut down to a set of allowed roots. Checked text is written by
// a model, so `#include "/etc/passwd"`, `#include "../../x"` or a symlink out of the project must
// not make Clang read (and quote in diagnostics) files that are none of its business. A path whose
// real path (symlinks resolved, dots removed) is under no root does not exist as far as Clang can
// tell: the include ends in Clang's own fatal "'x' file not found", __has_include is false.
// Everything else is the real file system, unchanged (names included, so diagnostics read as in a
// whole-file run). The main file is a remapped buffer: if its path does not exist, Clang never
// asks for it.
class RootedFS : public llvm::vfs::ProxyFileSystem {
public:
  explicit RootedFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS)
      : ProxyFileSystem(std::move(FS)) {}

  // allow adds a root: a directory and all below it. A path that does not exist (yet) allows
  // nothing.
  void allow(const std::string &Path) {
    std::string Real;
    if (realPath(Path, Real))
      Roots.push_back(std::move(Real));
  }

  // allowFile adds a single file as a root. Its directory may then be stat'ed (FileManager looks
  // up a file's directory first) but nothing else in it is visible.
  void allowFile(const std::string &Path) {
    std::string Real;
    if (!realPath(Path, Real))
      return;
    FileDirs.push_back(llvm::sys::path::parent_path(Real).str());
    Roots.push_back(std::move(Real));
  }

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &Path) override {
    // FileManager stats a chunk's virtual file once when it is made. It never exists on disk,
    // but it is said to (a fresh unique id, no disk access), so that FileManager gives its entry
    // a real path name next to the checked file: #embed "x" looks for x next to the real path
    // of the file it is in, as it does for the whole file.
    std::string P = Path.str();
    if (llvm::StringRef(P).contains(kChunkMark))
      return llvm::vfs::Status(P, llvm::vfs::getNextVirtualUniqueID(), {}, 0, 0, 0,
                               llvm::sys::fs::file_type::regular_file, llvm::sys::fs::all_read);
    if (!allowed(Path) && !isFileDir(Path))
      return notFound();
    return ProxyFileSystem::status(Path);
  }
  bool exists(const llvm::Twine &Path) override {
    return allowed(Path) && ProxyFileSystem::exists(Path);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &Path) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::openFileForRead(Path);
  }
  llvm::vfs::directory_iterator dir_begin(const llvm::Twine &Dir, std::error_code &EC) override {
    if (!allowed(Dir)) {
      EC = notFound();
      return {};
    }
    return ProxyFileSystem::dir_begin(Dir, EC);
  }
  std::error_code getRealPath(const llvm::Twine &Path,
                              llvm::SmallVectorImpl<char> &Output) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::getRealPath(Path, Output);
  }

private:
  static std::error_code notFound() {
    return std::make_error_code(std::errc::no_such_file_or_directory);
  }

  // realPath is realpath(3): relative paths are taken from the process's working directory, which
  // is the real file system's too. (Not vfs getRealPath: that opens the file to ask /proc, and an
  // open() of a FIFO outside the roots could block.)
  static bool realPath(const std::string &Path, std::string &Out) {
    if (Path.empty())
      return false;
    char *R = ::realpath(Path.c_str(), nullptr);
    if (!R)
      return false;
    Out = R;
    free(R);
    return true;
  }

  // allowed resolves Path and looks for a root that is it or one of its ancestors. A path that
  // cannot be resolved does not exist, or is in a directory we may not search: refused either
  // way. (Checked text cannot create files, so a path cannot change between this check and the
  // open that follows.)
  bool allowed(const llvm::Twine &Path) {
    std::string Real;
    if (!realPath(Path.str(), Real))
      return false;
    llvm::StringRef R = Real;
    for (const std::string &Root : Roots)
      if (R.starts_with(Root) &&
          (R.size() == Root.size() || Root.back() == '/' || R[Root.size()] == '/'))
        return true;
    return false;
  }

  bool isFileDir(const llvm::Twine &Path) {
    std::string Real;
    return !FileDirs.empty() && realPath(Path.str(), Real) &&
           llvm::is_contained(FileDirs, Real);
  }

  std::vector<std::string> Roots;
  std::vector<std::string> FileDirs; // directories of single-file roots
};
} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> guardFileSystem(const CompilerInvocation &Inv,
                                                                llvm::StringRef FileDir,
                                                                llvm::StringRef Root,
                                                                llvm::StringRef ClangPath) {
  auto FS = llvm::makeIntrusiveRefCnt<RootedFS>(llvm::vfs::getRealFileSystem());
  FS->allow(FileDir.str());
  FS->allow(Root.str());
  FS->allow(llvm::sys::path::parent_path(llvm::sys::path::parent_path(ClangPath)).str()); // …/llvm-19
  const HeaderSearchOptions &HS = Inv.getHeaderSearchOpts();
  for (const HeaderSearchOptions::Entry &E : HS.UserEntries) // user's and driver's, all groups
    FS->allow(E.Path);
  FS->allow(HS.ResourceDir);
  if (HS.Sysroot != "/") // the default sysroot "/" is no restriction to grant
    FS->allow(HS.Sysroot);
  for (const std::string &F : HS.VFSOverlayFiles)
    FS->allowFile(F);
  const PreprocessorOptions &PO = Inv.getPreprocessorOpts();
  for (const std::string &F : PO.Includes)
    FS->allowFile(F);
  for (const std::string &F : PO.MacroIncludes)
    FS->allowFile(F);
  FS->allowFile(PO.ImplicitPCHInclude);
  return FS;
}

} // namespace hydra
