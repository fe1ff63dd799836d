// privatemember.h: reaching a private data member of a Clang class without patching Clang.
#pragma once

// HYDRA_PRIVATE_MEMBER(Class, Name, Type) defines NameTag where it is used; `Obj.*memberOf(NameTag{})`
// is then the member Name (of type Type) of Obj. It relies on [temp.explicit]: an explicit
// instantiation may name a private member, because access checking does not apply to its template
// arguments; the instantiated NameAccess defines memberOf, a friend found through NameTag. Each
// use names the member and its exact type in Clang 19's headers; a rename fails the build, not
// the run.
#define HYDRA_PRIVATE_MEMBER(Class, Name, ...)                                                  \
  struct Name##Tag {                                                                            \
    using Type = __VA_ARGS__ Class::*;                                                          \
    friend Type memberOf(Name##Tag);                                                            \
  };                                                                                            \
  template <typename Tag, typename Tag::Type Member> struct Name##Access {                     \
    friend typename Tag::Type memberOf(Tag) { return Member; }                                  \
  };                                                                                            \
  template struct Name##Access<Name##Tag, &Class::Name>;
