// sqlq_node.cc -- the native half of the Node.js package: every call of
// include/sqlq.h, each run off the main thread.
//
// Threading.  A sqlq_db may be used by one thread at a time, so every call
// on a handle is a Call (a Napi::AsyncWorker on the libuv pool) queued on
// its Db: a Db runs one Call at a time, in the order they were made, and
// starts the next when one settles.  The main thread touches the sqlq_db
// only through sqlq_interrupt() (which the library allows from any thread)
// and only while the handle is not closing: close() marks the Db closed
// before it queues the Call that frees it.  A Call holds a reference to
// its Db's JavaScript object, so a Db is never garbage-collected while a
// Call is queued or running; the finalizer closes a Db that is still open.
//
// Errors.  A Call that fails rejects its promise with an instance of the
// JavaScript class registered for its status (setErrorClasses), whose
// message is sqlq_errmsg() read on the worker thread right after the call.
// Bad arguments throw a TypeError at once (no promise is made).
#include <napi.h>
#include <sqlq.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

// The error classes, indexed by status code, set once by lib/index.js.
Napi::ObjectReference *error_classes = nullptr;

Napi::Value MakeError(Napi::Env env, int status, const std::string &msg);

// A promise rejected at once with the error of status.
Napi::Value Rejected(Napi::Env env, int status, const std::string &msg) {
  auto d = Napi::Promise::Deferred::New(env);
  d.Reject(MakeError(env, status, msg));
  return d.Promise();
}

Napi::Value MakeError(Napi::Env env, int status, const std::string &msg) {
  if (error_classes != nullptr) {
    Napi::Object classes = error_classes->Value();
    Napi::Value ctor = classes.Get(status);
    if (!ctor.IsFunction()) ctor = classes.Get(static_cast<uint32_t>(SQLQ_ERROR));
    if (ctor.IsFunction()) {
      return ctor.As<Napi::Function>().New({Napi::String::New(env, msg), Napi::Number::New(env, status)});
    }
  }
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("status", Napi::Number::New(env, status));
  return e.Value();
}

// ---------------------------------------------------------------------------
// Reading arguments on the main thread.  Each throws a TypeError naming the
// argument when it has the wrong type.

[[noreturn]] void Bad(Napi::Env env, const char *what, const char *expected) {
  throw Napi::TypeError::New(env, std::string(what) + " must be " + expected);
}

// A string without NUL characters (names, URLs, keys).
std::string Text(const Napi::Value &v, const char *what) {
  if (!v.IsString()) Bad(v.Env(), what, "a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.find('\0') != std::string::npos) Bad(v.Env(), what, "a string without NUL characters");
  return s;
}

// An optional text: undefined or null gives has = false.
bool OptText(const Napi::Value &v, const char *what, std::string *out) {
  if (v.IsUndefined() || v.IsNull()) return false;
  *out = Text(v, what);
  return true;
}

// Bytes: a Buffer or other Uint8Array, or a string (taken as UTF-8).
std::string Bytes(const Napi::Value &v, const char *what) {
  if (v.IsString()) return v.As<Napi::String>().Utf8Value();
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    return std::string(reinterpret_cast<const char *>(a.Data()), a.ByteLength());
  }
  if (v.IsArrayBuffer()) {
    Napi::ArrayBuffer a = v.As<Napi::ArrayBuffer>();
    return std::string(static_cast<const char *>(a.Data()), a.ByteLength());
  }
  Bad(v.Env(), what, "a Buffer, a Uint8Array or a string");
}

double Num(const Napi::Value &v, const char *what) {
  if (!v.IsNumber()) Bad(v.Env(), what, "a number");
  return v.As<Napi::Number>().DoubleValue();
}

double OptNum(const Napi::Value &v, const char *what, double dflt) {
  return v.IsUndefined() || v.IsNull() ? dflt : Num(v, what);
}

// An integer in [lo, hi] given as a number (an integer value) or a BigInt.
int64_t Int(const Napi::Value &v, const char *what, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (v.IsBigInt()) {
    bool lossless = false;
    x = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) Bad(v.Env(), what, "an integer in range");
  } else if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d) || std::floor(d) != d || d < -9007199254740991.0 || d > 9007199254740991.0) {
      Bad(v.Env(), what, "an integer");
    }
    x = static_cast<int64_t>(d);
  } else {
    Bad(v.Env(), what, "an integer (a number or a BigInt)");
  }
  if (x < lo || x > hi) Bad(v.Env(), what, "an integer in range");
  return x;
}

int64_t OptInt(const Napi::Value &v, const char *what, int64_t lo, int64_t hi, int64_t dflt) {
  return v.IsUndefined() || v.IsNull() ? dflt : Int(v, what, lo, hi);
}

Napi::Object Opts(const Napi::Value &v, const char *what) {
  if (v.IsUndefined() || v.IsNull()) return Napi::Object::New(v.Env());
  if (!v.IsObject()) Bad(v.Env(), what, "an object");
  return v.As<Napi::Object>();
}

// ---------------------------------------------------------------------------
// Building results on the main thread.

Napi::Value Str(Napi::Env env, const char *s) {
  return s == nullptr ? env.Null() : Napi::String::New(env, s);
}

Napi::Value I64(Napi::Env env, int64_t x) { return Napi::Number::New(env, static_cast<double>(x)); }

Napi::Value Buf(Napi::Env env, const unsigned char *p, size_t n) {
  return Napi::Buffer<unsigned char>::Copy(env, n ? p : reinterpret_cast<const unsigned char *>(""), n);
}

Napi::Value Token(Napi::Env env, int64_t t) { return Napi::BigInt::New(env, t); }

// What a Call runs on the worker thread, and what builds its result on the
// main thread (see Call).
using Work = std::function<int(sqlq_db *)>;
using Done = std::function<Napi::Value(Napi::Env, int)>;

// An array the library returned and owns until its free function, which
// the destructor calls (also when the call failed: the library then left
// it NULL and 0).  Convert makes the JavaScript object of one element.
template <class T, void (*Free)(T *, size_t), Napi::Value (*Convert)(Napi::Env, const T &)>
struct Owned {
  T *p = nullptr;
  size_t n = 0;
  Owned() = default;
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { Free(p, n); }
  // The elements as a JavaScript array.
  Napi::Value Array(Napi::Env env) const {
    Napi::Array r = Napi::Array::New(env, n);
    for (size_t i = 0; i < n; i++) r.Set(i, Convert(env, p[i]));
    return r;
  }
};

// The done of a call whose result is the Owned array out.
template <class O>
Done ArrayOf(std::shared_ptr<O> out) {
  return [out](Napi::Env env, int) { return out->Array(env); };
}

// An options struct with its size set and every other field zero (the
// C++ form of SQLQ_OPTIONS_INIT, which g++ -Wextra warns about).
template <class T>
T Options() {
  T o{};
  o.size = sizeof(T);
  return o;
}

class Db;

// One call of the library on a handle, run on the libuv pool.  work runs
// on the worker thread with the handle and returns a status; the statuses
// in ok_mask (bit i for status i) resolve the promise as SQLQ_OK does,
// with done's value, built on the main thread.  Every other status rejects
// it.  Whatever work stores for done lives in the closures' captures.

class Call : public Napi::AsyncWorker {
 public:
  Call(Napi::Env env, Db *db, Napi::Object self, Work work, Done done, unsigned ok_mask)
      : Napi::AsyncWorker(env, "sqlq"),
        db_(db),
        deferred_(Napi::Promise::Deferred::New(env)),
        work_(std::move(work)),
        done_(std::move(done)),
        ok_mask_(ok_mask | 1u) {
    self_ = Napi::Persistent(self);
  }
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override;
  void OnOK() override;

 private:
  Db *db_;
  Napi::ObjectReference self_;
  Napi::Promise::Deferred deferred_;
  Work work_;
  Done done_;
  unsigned ok_mask_;
  int rc_ = SQLQ_OK;
  std::string msg_;
};

class Lock;

// A handle: the sqlq_db and the queue of its Calls.
class Db : public Napi::ObjectWrap<Db> {
 public:
  static Napi::FunctionReference *ctor;
  static Napi::Function Init(Napi::Env env);
  explicit Db(const Napi::CallbackInfo &info);
  ~Db() override;

  sqlq_db *handle() const { return db_; }
  void Forget() { db_ = nullptr; }
  // Queue a Call on this handle and return its promise.  Throws an Error
  // (SQLQ_MISUSE) when the handle is closed.
  Napi::Value Run(const Napi::CallbackInfo &info, Work work, Done done, unsigned ok_mask = 0);
  Napi::Value RunOn(Napi::Env env, Napi::Object self, Work work, Done done, unsigned ok_mask);
  // Run f(handle, name) with the name in info[0] (what names it in errors).
  Napi::Value OnName(const Napi::CallbackInfo &info, const char *what, int (*f)(sqlq_db *, const char *));
  void Next();
  bool closed() const { return closed_; }

 private:
  Napi::Value Close(const Napi::CallbackInfo &info);
  Napi::Value Interrupt(const Napi::CallbackInfo &info);
  Napi::Value Closed(const Napi::CallbackInfo &info) { return Napi::Boolean::New(info.Env(), closed_); }
  Napi::Value Init_(const Napi::CallbackInfo &info);
  Napi::Value Enqueue(const Napi::CallbackInfo &info);
  Napi::Value EnqueueBatch(const Napi::CallbackInfo &info);
  Napi::Value Claim(const Napi::CallbackInfo &info);
  Napi::Value Ack(const Napi::CallbackInfo &info);
  Napi::Value AckBatch(const Napi::CallbackInfo &info);
  Napi::Value Fail(const Napi::CallbackInfo &info);
  Napi::Value Release(const Napi::CallbackInfo &info);
  Napi::Value Touch(const Napi::CallbackInfo &info);
  Napi::Value Wait(const Napi::CallbackInfo &info);
  Napi::Value WaitClaim(const Napi::CallbackInfo &info);
  Napi::Value Pause(const Napi::CallbackInfo &info);
  Napi::Value Resume(const Napi::CallbackInfo &info);
  Napi::Value Stats(const Napi::CallbackInfo &info);
  Napi::Value Health(const Napi::CallbackInfo &info);
  Napi::Value Summary(const Napi::CallbackInfo &info);
  Napi::Value List(const Napi::CallbackInfo &info);
  Napi::Value Retry(const Napi::CallbackInfo &info);
  Napi::Value Cancel(const Napi::CallbackInfo &info);
  Napi::Value Purge(const Napi::CallbackInfo &info);
  Napi::Value Begin(const Napi::CallbackInfo &info);
  Napi::Value Commit(const Napi::CallbackInfo &info);
  Napi::Value Rollback(const Napi::CallbackInfo &info);
  Napi::Value LockAcquire(const Napi::CallbackInfo &info);
  Napi::Value LockXact(const Napi::CallbackInfo &info);
  Napi::Value Locks(const Napi::CallbackInfo &info);
  Napi::Value LockKey(const Napi::CallbackInfo &info);
  Napi::Value RingCreate(const Napi::CallbackInfo &info);
  Napi::Value RingPush(const Napi::CallbackInfo &info);
  Napi::Value RingPushBatch(const Napi::CallbackInfo &info);
  Napi::Value RingRead(const Napi::CallbackInfo &info);
  Napi::Value RingWait(const Napi::CallbackInfo &info);
  Napi::Value RingDrop(const Napi::CallbackInfo &info);
  Napi::Value Rings(const Napi::CallbackInfo &info);
  Napi::Value PoolAdd(const Napi::CallbackInfo &info);
  Napi::Value PoolRemove(const Napi::CallbackInfo &info);
  Napi::Value PoolList(const Napi::CallbackInfo &info);
  Napi::Value PoolNext(const Napi::CallbackInfo &info);
  Napi::Value PoolRelease(const Napi::CallbackInfo &info);
  Napi::Value Pools(const Napi::CallbackInfo &info);
  Napi::Value Subscribe(const Napi::CallbackInfo &info);
  Napi::Value Unsubscribe(const Napi::CallbackInfo &info);
  Napi::Value Subscriptions(const Napi::CallbackInfo &info);
  Napi::Value CronAdd(const Napi::CallbackInfo &info);
  Napi::Value CronRemove(const Napi::CallbackInfo &info);
  Napi::Value CronPause(const Napi::CallbackInfo &info);
  Napi::Value CronResume(const Napi::CallbackInfo &info);
  Napi::Value CronList(const Napi::CallbackInfo &info);
  Napi::Value CronTick(const Napi::CallbackInfo &info);
  Napi::Value RetentionSet(const Napi::CallbackInfo &info);
  Napi::Value RetentionGet(const Napi::CallbackInfo &info);
  Napi::Value HistoryPrune(const Napi::CallbackInfo &info);
  Napi::Value ConcurrencySet(const Napi::CallbackInfo &info);
  Napi::Value ConcurrencyGet(const Napi::CallbackInfo &info);
  Napi::Value RateSet(const Napi::CallbackInfo &info);
  Napi::Value RateGet(const Napi::CallbackInfo &info);
  Napi::Value GroupLimitSet(const Napi::CallbackInfo &info);
  Napi::Value GroupLimitGet(const Napi::CallbackInfo &info);
  Napi::Value FairSet(const Napi::CallbackInfo &info);
  Napi::Value FairGet(const Napi::CallbackInfo &info);

  sqlq_db *db_ = nullptr;
  bool closed_ = false;
  bool busy_ = false;
  std::deque<Call *> pending_;
};

Napi::FunctionReference *Db::ctor = nullptr;

void Call::Execute() {
  rc_ = work_(db_->handle());
  if (rc_ != SQLQ_OK && !(rc_ < 32 && (ok_mask_ >> rc_) & 1u)) msg_ = sqlq_errmsg(db_->handle());
}

void Call::OnOK() {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  if (rc_ != SQLQ_OK && !(rc_ < 32 && (ok_mask_ >> rc_) & 1u)) {
    deferred_.Reject(MakeError(env, rc_, msg_));
  } else {
    try {
      deferred_.Resolve(done_ ? done_(env, rc_) : env.Undefined());
    } catch (const Napi::Error &e) {
      deferred_.Reject(e.Value());
    }
  }
  db_->Next();
}

Db::Db(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Db>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "use sqlq.open() to open a database");
  }
  db_ = info[0].As<Napi::External<sqlq_db>>().Data();
}

Db::~Db() {
  // The finalizer.  A Call holds a reference to its Db, so none is queued
  // or running, except when the environment is torn down (the process
  // exits) with a call still on the pool: then the handle is left to the
  // exit, since another thread may still use it.
  if (closed_) return;
  if (busy_) {
    sqlq_interrupt(db_);
    return;
  }
  sqlq_close(db_);
}

Napi::Value Db::RunOn(Napi::Env env, Napi::Object self, Work work, Done done, unsigned ok_mask) {
  if (closed_) return Rejected(env, SQLQ_MISUSE, "the database handle is closed");
  Call *c = new Call(env, this, self, std::move(work), std::move(done), ok_mask);
  Napi::Promise p = c->Promise();
  if (busy_) {
    pending_.push_back(c);
  } else {
    busy_ = true;
    c->Queue();
  }
  return p;
}

Napi::Value Db::Run(const Napi::CallbackInfo &info, Work work, Done done, unsigned ok_mask) {
  return RunOn(info.Env(), info.This().As<Napi::Object>(), std::move(work), std::move(done), ok_mask);
}

Napi::Value Db::OnName(const Napi::CallbackInfo &info, const char *what, int (*f)(sqlq_db *, const char *)) {
  std::string name = Text(info[0], what);
  return Run(info, [=](sqlq_db *h) { return f(h, name.c_str()); }, nullptr);
}

void Db::Next() {
  if (pending_.empty()) {
    busy_ = false;
    return;
  }
  Call *c = pending_.front();
  pending_.pop_front();
  c->Queue();
}

Napi::Value Db::Close(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (closed_) {
    auto d = Napi::Promise::Deferred::New(env);
    d.Resolve(env.Undefined());
    return d.Promise();
  }
  // Cut a running wait short, so that the close is not stuck behind it.
  sqlq_interrupt(db_);
  Napi::Value p = Run(info, [](sqlq_db *h) {
    sqlq_close(h);
    return SQLQ_OK;
  }, nullptr);
  closed_ = true;
  return p;
}

Napi::Value Db::Interrupt(const Napi::CallbackInfo &info) {
  if (!closed_) sqlq_interrupt(db_);
  return info.Env().Undefined();
}

Napi::Value Db::Init_(const Napi::CallbackInfo &info) {
  auto v = std::make_shared<int>(0);
  return Run(info, [v](sqlq_db *h) { return sqlq_init(h, v.get()); },
             [v](Napi::Env env, int) { return Napi::Number::New(env, *v); });
}

// ---------------------------------------------------------------------------
// Enqueueing.

// A job spec with the storage of its strings.
struct Spec {
  std::string payload, dedupe, group;
  bool has_dedupe = false, has_group = false;
  sqlq_job_spec spec{};
  void Read(Napi::Value payload_v, Napi::Object o) {
    payload = Bytes(payload_v, "payload");
    spec.priority = static_cast<int>(OptInt(o.Get("priority"), "priority", INT32_MIN, INT32_MAX, 0));
    spec.delay = OptNum(o.Get("delay"), "delay", 0);
    spec.max_attempts = static_cast<int>(OptInt(o.Get("maxAttempts"), "maxAttempts", INT32_MIN, INT32_MAX, 0));
    has_dedupe = OptText(o.Get("dedupeKey"), "dedupeKey", &dedupe);
    has_group = OptText(o.Get("groupKey"), "groupKey", &group);
  }
  // Point the spec at the strings, once they no longer move.
  const sqlq_job_spec *Fix() {
    spec.payload = payload.data();
    spec.payload_len = payload.size();
    spec.dedupe_key = has_dedupe ? dedupe.c_str() : nullptr;
    spec.group_key = has_group ? group.c_str() : nullptr;
    return &spec;
  }
};

Napi::Value Db::Enqueue(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto s = std::make_shared<Spec>();
  s->Read(info[1], Opts(info[2], "options"));
  struct Out {
    int64_t id = 0;
    int dup = 0;
  };
  auto out = std::make_shared<Out>();
  return Run(info, [=](sqlq_db *h) { return sqlq_enqueue(h, queue.c_str(), s->Fix(), &out->id, &out->dup); },
             [out](Napi::Env env, int) {
               Napi::Object r = Napi::Object::New(env);
               r.Set("id", I64(env, out->id));
               r.Set("duplicate", Napi::Boolean::New(env, out->dup != 0));
               return r;
             });
}

// enqueueBatch(queue, payloads, specs): payloads an array of bytes, specs
// an array of option objects (or undefined) of the same length.
Napi::Value Db::EnqueueBatch(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  if (!info[1].IsArray()) Bad(info.Env(), "jobs", "an array");
  Napi::Array a = info[1].As<Napi::Array>();
  auto specs = std::make_shared<std::vector<Spec>>(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value e = a.Get(i);
    if (e.IsObject() && !e.IsTypedArray() && !e.IsArrayBuffer()) {
      Napi::Object o = e.As<Napi::Object>();
      (*specs)[i].Read(o.Get("payload"), o);
    } else {
      (*specs)[i].Read(e, Napi::Object::New(info.Env()));
    }
  }
  // info[2]: the ids the jobs wait for (libsqlq 1.1), or undefined.
  bool has_after = !info[2].IsUndefined() && !info[2].IsNull();
  auto after = std::make_shared<std::vector<int64_t>>();
  if (has_after) {
    if (!info[2].IsArray()) Bad(info.Env(), "after", "an array of job ids");
    Napi::Array w = info[2].As<Napi::Array>();
    for (uint32_t i = 0; i < w.Length(); i++) after->push_back(Int(w.Get(i), "after", INT64_MIN, INT64_MAX));
  }
  auto ids = std::make_shared<std::vector<int64_t>>(specs->size());
  return Run(info,
             [=](sqlq_db *h) {
               std::vector<sqlq_job_spec> v;
               v.reserve(specs->size());
               for (Spec &s : *specs) v.push_back(*s.Fix());
               if (has_after)
                 return sqlq_enqueue_after(h, queue.c_str(), v.data(), v.size(), after->data(), after->size(),
                                           ids->data());
               return sqlq_enqueue_batch(h, queue.c_str(), v.data(), v.size(), ids->data());
             },
             [ids](Napi::Env env, int) {
               Napi::Array r = Napi::Array::New(env, ids->size());
               for (size_t i = 0; i < ids->size(); i++) r.Set(i, I64(env, (*ids)[i]));
               return r;
             });
}

// ---------------------------------------------------------------------------
// Claiming and finishing.

Napi::Value JobObject(Napi::Env env, const sqlq_job &j) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", I64(env, j.id));
  o.Set("token", Token(env, j.token));
  o.Set("queue", Str(env, j.queue));
  o.Set("payload", Buf(env, j.payload, j.payload_len));
  o.Set("priority", Napi::Number::New(env, j.priority));
  o.Set("attempts", Napi::Number::New(env, j.attempts));
  o.Set("maxAttempts", Napi::Number::New(env, j.max_attempts));
  o.Set("runAtUs", I64(env, j.run_at_us));
  o.Set("createdAtUs", I64(env, j.created_at_us));
  o.Set("leaseUntilUs", I64(env, j.lease_until_us));
  o.Set("groupKey", Str(env, j.group_key));
  o.Set("dedupeKey", Str(env, j.dedupe_key));
  return o;
}

Napi::Value Db::Claim(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  size_t max = static_cast<size_t>(Int(info[1], "max", 0, INT64_MAX));
  sqlq_claim_options o = Options<sqlq_claim_options>();
  o.lease = OptNum(Opts(info[2], "options").Get("lease"), "lease", 0);
  auto out = std::make_shared<Owned<sqlq_job, sqlq_jobs_free, JobObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_claim(h, queue.c_str(), max, &o, &out->p, &out->n); },
             ArrayOf(out));
}

Napi::Value Db::Ack(const Napi::CallbackInfo &info) {
  int64_t id = Int(info[0], "id", INT64_MIN, INT64_MAX);
  int64_t token = Int(info[1], "token", INT64_MIN, INT64_MAX);
  return Run(info, [=](sqlq_db *h) { return sqlq_ack(h, id, token); }, nullptr);
}

// A list of (id, token) pairs: an array of objects with id and token.
std::shared_ptr<std::vector<sqlq_job_ref>> Refs(const Napi::Value &v) {
  if (!v.IsArray()) Bad(v.Env(), "jobs", "an array of {id, token}");
  Napi::Array a = v.As<Napi::Array>();
  auto refs = std::make_shared<std::vector<sqlq_job_ref>>(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value e = a.Get(i);
    if (!e.IsObject()) Bad(v.Env(), "jobs", "an array of {id, token}");
    Napi::Object o = e.As<Napi::Object>();
    (*refs)[i].id = Int(o.Get("id"), "id", INT64_MIN, INT64_MAX);
    (*refs)[i].token = Int(o.Get("token"), "token", INT64_MIN, INT64_MAX);
  }
  return refs;
}

// ackBatch resolves with the number acked; stale tokens are not an error.
Napi::Value Db::AckBatch(const Napi::CallbackInfo &info) {
  auto refs = Refs(info[0]);
  auto acked = std::make_shared<size_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_ack_batch(h, refs->data(), refs->size(), acked.get()); },
             [acked](Napi::Env env, int) { return Napi::Number::New(env, static_cast<double>(*acked)); },
             1u << SQLQ_STALE);
}

Napi::Value Db::Fail(const Napi::CallbackInfo &info) {
  int64_t id = Int(info[0], "id", INT64_MIN, INT64_MAX);
  int64_t token = Int(info[1], "token", INT64_MIN, INT64_MAX);
  std::string error;
  bool has_error = OptText(info[2], "error", &error);
  Napi::Object opts = Opts(info[3], "options");
  sqlq_fail_options o = Options<sqlq_fail_options>();
  o.backoff = OptNum(opts.Get("backoff"), "backoff", 0);
  o.retry_now = opts.Get("retryNow").ToBoolean();
  o.dead = opts.Get("dead").ToBoolean();
  return Run(info,
             [=](sqlq_db *h) { return sqlq_fail(h, id, token, has_error ? error.c_str() : nullptr, &o); },
             nullptr);
}

Napi::Value Db::Release(const Napi::CallbackInfo &info) {
  int64_t id = Int(info[0], "id", INT64_MIN, INT64_MAX);
  int64_t token = Int(info[1], "token", INT64_MIN, INT64_MAX);
  double delay = OptNum(info[2], "delay", 0);
  return Run(info, [=](sqlq_db *h) { return sqlq_release(h, id, token, delay); }, nullptr);
}

Napi::Value Db::Touch(const Napi::CallbackInfo &info) {
  int64_t id = Int(info[0], "id", INT64_MIN, INT64_MAX);
  int64_t token = Int(info[1], "token", INT64_MIN, INT64_MAX);
  double lease = Num(info[2], "lease");
  auto until = std::make_shared<int64_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_touch(h, id, token, lease, until.get()); },
             [until](Napi::Env env, int) { return I64(env, *until); });
}

// wait resolves with "ready", "timeout" or "interrupted".
Napi::Value WaitResult(Napi::Env env, int rc) {
  return Napi::String::New(env, rc == SQLQ_OK ? "ready" : rc == SQLQ_TIMEOUT ? "timeout" : "interrupted");
}

Napi::Value Db::Wait(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  double timeout = OptNum(info[1], "timeout", -1);
  return Run(info, [=](sqlq_db *h) { return sqlq_wait(h, queue.c_str(), timeout); }, WaitResult,
             (1u << SQLQ_TIMEOUT) | (1u << SQLQ_INTERRUPTED));
}

// waitClaim(queue, timeout, max, options) waits as wait() does and, once
// a job is due, claims as claim() does, both on the same pool thread: the
// Worker's claim starts the moment the wait ends instead of after a trip
// through the event loop, which may be busy.  Resolves with {state, jobs}:
// state as wait() says it, jobs those claimed (none unless "ready").
Napi::Value Db::WaitClaim(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  double timeout = OptNum(info[1], "timeout", -1);
  size_t max = static_cast<size_t>(Int(info[2], "max", 0, INT64_MAX));
  sqlq_claim_options o = Options<sqlq_claim_options>();
  o.lease = OptNum(Opts(info[3], "options").Get("lease"), "lease", 0);
  auto out = std::make_shared<Owned<sqlq_job, sqlq_jobs_free, JobObject>>();
  auto waited = std::make_shared<int>(SQLQ_OK);
  return Run(info,
             [=](sqlq_db *h) {
               *waited = sqlq_wait(h, queue.c_str(), timeout);
               if (*waited != SQLQ_OK) return *waited;
               return sqlq_claim(h, queue.c_str(), max, &o, &out->p, &out->n);
             },
             [out, waited](Napi::Env env, int) {
               Napi::Object r = Napi::Object::New(env);
               r.Set("state", WaitResult(env, *waited));
               r.Set("jobs", out->Array(env));
               return r;
             },
             (1u << SQLQ_TIMEOUT) | (1u << SQLQ_INTERRUPTED));
}

// ---------------------------------------------------------------------------
// Administration.

Napi::Value Db::Pause(const Napi::CallbackInfo &info) { return OnName(info, "queue", sqlq_pause); }

Napi::Value Db::Resume(const Napi::CallbackInfo &info) { return OnName(info, "queue", sqlq_resume); }

Napi::Value StatsObject(Napi::Env env, const sqlq_queue_stats &s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("queue", Str(env, s.queue));
  o.Set("ready", I64(env, s.ready));
  o.Set("scheduled", I64(env, s.scheduled));
  o.Set("running", I64(env, s.running));
  o.Set("dead", I64(env, s.dead));
  o.Set("paused", Napi::Boolean::New(env, s.paused != 0));
  return o;
}

Napi::Value Db::Stats(const Napi::CallbackInfo &info) {
  std::string queue;
  bool one = OptText(info[0], "queue", &queue);
  auto out = std::make_shared<Owned<sqlq_queue_stats, sqlq_queue_stats_free, StatsObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_stats(h, one ? queue.c_str() : nullptr, &out->p, &out->n); },
             ArrayOf(out));
}

Napi::Value HealthObject(Napi::Env env, const sqlq_health_item &h) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Str(env, h.name));
  o.Set("value", I64(env, h.value));
  o.Set("unit", Str(env, h.unit));
  o.Set("threshold", I64(env, h.threshold));
  o.Set("over", Napi::Boolean::New(env, h.over != 0));
  o.Set("holder", Str(env, h.holder));
  o.Set("startedAtUs", I64(env, h.started_at_us));
  o.Set("detail", Str(env, h.detail));
  return o;
}

// What holds the queues back (docs/health.md): resolves with the items.
Napi::Value Db::Health(const Napi::CallbackInfo &info) {
  auto out = std::make_shared<Owned<sqlq_health_item, sqlq_health_items_free, HealthObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_health(h, &out->p, &out->n); }, ArrayOf(out));
}

Napi::Value SummaryObject(Napi::Env env, const sqlq_queue_summary &s) {
  static const struct {
    unsigned bit;
    const char *name;
  } bits[] = {{SQLQ_MORE_READY, "ready"},
              {SQLQ_MORE_SCHEDULED, "scheduled"},
              {SQLQ_MORE_RUNNING, "running"},
              {SQLQ_MORE_DEAD, "dead"}};
  Napi::Object o = Napi::Object::New(env);
  o.Set("queue", Str(env, s.queue));
  o.Set("ready", I64(env, s.ready));
  o.Set("scheduled", I64(env, s.scheduled));
  o.Set("running", I64(env, s.running));
  o.Set("dead", I64(env, s.dead));
  Napi::Array more = Napi::Array::New(env);
  for (const auto &b : bits)
    if (s.more & b.bit) more.Set(more.Length(), Napi::String::New(env, b.name));
  o.Set("more", more);
  o.Set("paused", Napi::Boolean::New(env, s.paused != 0));
  // Seconds the longest-waiting ready job has been due; null when none is.
  double age = static_cast<double>(s.oldest_ready_age_us) / 1e6;
  o.Set("oldestReadyAge", s.oldest_ready_age_us < 0 ? env.Null() : Napi::Number::New(env, age));
  return o;
}

// The limit of a listing call from options.limit (default dflt): an
// integer from 0 up, which the library checks against its own bounds
// (MisuseError); a negative one or another type is a TypeError.
int64_t Limit(Napi::Object opts, int64_t dflt) { return OptInt(opts.Get("limit"), "limit", 0, INT64_MAX, dflt); }

// summary({queue, limit}) (libsqlq 1.1): every queue's counts, or queue's,
// each stopping at limit (default 10,000).
Napi::Value Db::Summary(const Napi::CallbackInfo &info) {
  Napi::Object opts = Opts(info[0], "options");
  std::string queue;
  bool one = OptText(opts.Get("queue"), "queue", &queue);
  int64_t limit = Limit(opts, 10000);
  auto out = std::make_shared<Owned<sqlq_queue_summary, sqlq_queue_summaries_free, SummaryObject>>();
  return Run(info,
             [=](sqlq_db *h) { return sqlq_summary(h, one ? queue.c_str() : nullptr, limit, &out->p, &out->n); },
             ArrayOf(out));
}

Napi::Value JobInfoObject(Napi::Env env, const sqlq_job_info &j) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", I64(env, j.id));
  o.Set("state", Napi::Number::New(env, j.state));
  o.Set("priority", Napi::Number::New(env, j.priority));
  o.Set("attempts", Napi::Number::New(env, j.attempts));
  o.Set("maxAttempts", Napi::Number::New(env, j.max_attempts));
  o.Set("runAtUs", I64(env, j.run_at_us));
  o.Set("createdAtUs", I64(env, j.created_at_us));
  o.Set("leaseUntilUs", I64(env, j.lease_until_us));
  o.Set("dedupeKey", Str(env, j.dedupe_key));
  o.Set("groupKey", Str(env, j.group_key));
  o.Set("lastError", Str(env, j.last_error));
  o.Set("payload", Buf(env, j.payload, j.payload_len));
  return o;
}

Napi::Value Db::List(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  Napi::Object opts = Opts(info[1], "options");
  int state = static_cast<int>(OptInt(opts.Get("state"), "state", INT32_MIN, INT32_MAX, 0));
  size_t limit = static_cast<size_t>(OptInt(opts.Get("limit"), "limit", 0, INT64_MAX, 0));
  auto out = std::make_shared<Owned<sqlq_job_info, sqlq_job_infos_free, JobInfoObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_list(h, queue.c_str(), state, limit, &out->p, &out->n); },
             ArrayOf(out));
}

Napi::Value Count(Napi::Env env, size_t n) { return Napi::Number::New(env, static_cast<double>(n)); }

// The job ids of the array v, or of none when v is not one (missing: the
// caller's default) and missing is true.
std::shared_ptr<std::vector<int64_t>> Ids(Napi::Value v, bool missing) {
  auto ids = std::make_shared<std::vector<int64_t>>();
  if (missing) return ids;
  if (!v.IsArray()) Bad(v.Env(), "ids", "an array of job ids");
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) ids->push_back(Int(a.Get(i), "id", INT64_MIN, INT64_MAX));
  return ids;
}

Napi::Value Db::Retry(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  bool all = info[1].IsUndefined() || info[1].IsNull();
  auto ids = Ids(info[1], all);
  auto n = std::make_shared<size_t>(0);
  return Run(info,
             [=](sqlq_db *h) {
               return sqlq_retry(h, queue.c_str(), all ? nullptr : ids->data(), ids->size(), n.get());
             },
             [n](Napi::Env env, int) { return Count(env, *n); });
}

// cancel(ids) (libsqlq 1.1): how many were cancelled.
Napi::Value Db::Cancel(const Napi::CallbackInfo &info) {
  auto ids = Ids(info[0], false);
  auto n = std::make_shared<size_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_cancel(h, ids->data(), ids->size(), n.get()); },
             [n](Napi::Env env, int) { return Count(env, *n); });
}

Napi::Value Db::Purge(const Napi::CallbackInfo &info) {
  if (!info[0].IsString()) Bad(info.Env(), "queue", "a string");
  std::string queue = info[0].As<Napi::String>().Utf8Value();
  auto n = std::make_shared<size_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_purge(h, queue.c_str(), n.get()); },
             [n](Napi::Env env, int) { return Count(env, *n); });
}

Napi::Value Db::Begin(const Napi::CallbackInfo &info) { return Run(info, sqlq_begin, nullptr); }
Napi::Value Db::Commit(const Napi::CallbackInfo &info) { return Run(info, sqlq_commit, nullptr); }
Napi::Value Db::Rollback(const Napi::CallbackInfo &info) { return Run(info, sqlq_rollback, nullptr); }

// ---------------------------------------------------------------------------
// Locks.  A Lock's calls run on its Db's queue.  Closing the Db releases
// and frees every lock of it: a Lock then refuses its calls.  A Lock that
// is garbage-collected while held stays held until its Db closes (the
// finalizer cannot queue a call).

class Lock : public Napi::ObjectWrap<Lock> {
 public:
  static Napi::FunctionReference *ctor;
  static Napi::Function Init(Napi::Env env) {
    Napi::Function f = DefineClass(env, "NativeLock",
                                   {InstanceMethod("check", &Lock::Check), InstanceMethod("unlock", &Lock::Unlock),
                                    InstanceMethod("held", &Lock::Held)});
    ctor = new Napi::FunctionReference(Napi::Persistent(f));
    return f;
  }
  explicit Lock(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Lock>(info) {
    if (info.Length() != 2 || !info[0].IsExternal() || !info[1].IsObject()) {
      throw Napi::TypeError::New(info.Env(), "use db.lockAcquire() to take a lock");
    }
    lock_ = info[0].As<Napi::External<sqlq_lock>>().Data();
    db_obj_ = Napi::Persistent(info[1].As<Napi::Object>());
    db_ = Db::Unwrap(info[1].As<Napi::Object>());
  }

 private:
  Napi::Value Held(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), lock_ != nullptr && !db_->closed());
  }
  Napi::Value Check(const Napi::CallbackInfo &info) {
    double timeout = OptNum(info[0], "timeout", 5);
    if (lock_ == nullptr || db_->closed()) return Rejected(info.Env(), SQLQ_MISUSE, "the lock was released");
    sqlq_lock *l = lock_;
    return db_->RunOn(info.Env(), db_obj_.Value(), [=](sqlq_db *) { return sqlq_lock_check(l, timeout); }, nullptr,
                      0);
  }
  Napi::Value Unlock(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (lock_ == nullptr || db_->closed()) {
      auto d = Napi::Promise::Deferred::New(env);
      d.Resolve(env.Undefined());
      return d.Promise();
    }
    sqlq_lock *l = lock_;
    lock_ = nullptr;
    return db_->RunOn(env, db_obj_.Value(),
                      [=](sqlq_db *) {
                        sqlq_unlock(l);
                        return SQLQ_OK;
                      },
                      nullptr, 0);
  }
  sqlq_lock *lock_ = nullptr;
  Db *db_ = nullptr;
  Napi::ObjectReference db_obj_;
};

Napi::FunctionReference *Lock::ctor = nullptr;

Napi::Value Db::LockAcquire(const Napi::CallbackInfo &info) {
  std::string name = Bytes(info[0], "name");
  double timeout = OptNum(info[1], "timeout", -1);
  auto l = std::make_shared<sqlq_lock *>(nullptr);
  Napi::Object self = info.This().As<Napi::Object>();
  auto self_ref = std::make_shared<Napi::ObjectReference>(Napi::Persistent(self));
  return Run(info, [=](sqlq_db *h) { return sqlq_lock_acquire(h, name.data(), name.size(), timeout, l.get()); },
             [l, self_ref](Napi::Env env, int) -> Napi::Value {
               return Lock::ctor->New({Napi::External<sqlq_lock>::New(env, *l), self_ref->Value()});
             });
}

Napi::Value Db::LockXact(const Napi::CallbackInfo &info) {
  std::string name = Bytes(info[0], "name");
  double timeout = OptNum(info[1], "timeout", -1);
  return Run(info, [=](sqlq_db *h) { return sqlq_lock_xact(h, name.data(), name.size(), timeout); }, nullptr);
}

Napi::Value LockInfoObject(Napi::Env env, const sqlq_lock_info &l) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", l.name == nullptr ? env.Null() : Buf(env, l.name, l.name_len));
  o.Set("key", Token(env, l.key));
  o.Set("pid", I64(env, l.pid));
  o.Set("holder", Str(env, l.holder));
  o.Set("sinceAtUs", I64(env, l.since_at_us));
  o.Set("expiresAtUs", I64(env, l.expires_at_us));
  o.Set("fence", Token(env, l.fence));
  return o;
}

// locks({limit}) (libsqlq 1.1): the named locks held now, by any process.
Napi::Value Db::Locks(const Napi::CallbackInfo &info) {
  size_t limit = static_cast<size_t>(Limit(Opts(info[0], "options"), 100));
  auto out = std::make_shared<Owned<sqlq_lock_info, sqlq_lock_infos_free, LockInfoObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_locks(h, limit, &out->p, &out->n); }, ArrayOf(out));
}

// lockKey(name) (libsqlq 1.1): the key locks() lists the lock name by, a
// BigInt.  It reads no database but runs on the handle's queue like every
// call on it, since the handle may be in use on the pool.
Napi::Value Db::LockKey(const Napi::CallbackInfo &info) {
  std::string name = Bytes(info[0], "name");
  auto key = std::make_shared<int64_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_lock_key(h, name.data(), name.size(), key.get()); },
             [key](Napi::Env env, int) { return Token(env, *key); });
}

// ---------------------------------------------------------------------------
// Rings.

Napi::Value Db::RingCreate(const Napi::CallbackInfo &info) {
  std::string ring = Text(info[0], "ring");
  size_t cap = static_cast<size_t>(Int(info[1], "capacity", 0, INT64_MAX));
  return Run(info, [=](sqlq_db *h) { return sqlq_ring_create(h, ring.c_str(), cap); }, nullptr);
}

Napi::Value Db::RingPush(const Napi::CallbackInfo &info) {
  std::string ring = Text(info[0], "ring");
  std::string payload = Bytes(info[1], "payload");
  auto seq = std::make_shared<int64_t>(0);
  return Run(info,
             [=](sqlq_db *h) { return sqlq_ring_push(h, ring.c_str(), payload.data(), payload.size(), seq.get()); },
             [seq](Napi::Env env, int) { return I64(env, *seq); });
}

Napi::Value Db::RingPushBatch(const Napi::CallbackInfo &info) {
  std::string ring = Text(info[0], "ring");
  if (!info[1].IsArray()) Bad(info.Env(), "payloads", "an array");
  Napi::Array a = info[1].As<Napi::Array>();
  auto payloads = std::make_shared<std::vector<std::string>>();
  for (uint32_t i = 0; i < a.Length(); i++) payloads->push_back(Bytes(a.Get(i), "payload"));
  auto seq = std::make_shared<int64_t>(0);
  return Run(info,
             [=](sqlq_db *h) {
               std::vector<const void *> p;
               std::vector<size_t> lens;
               for (const std::string &s : *payloads) {
                 p.push_back(s.data());
                 lens.push_back(s.size());
               }
               return sqlq_ring_push_batch(h, ring.c_str(), p.data(), lens.data(), p.size(), seq.get());
             },
             [seq](Napi::Env env, int) { return I64(env, *seq); });
}

Napi::Value EntryObject(Napi::Env env, const sqlq_ring_entry &e) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("seq", I64(env, e.seq));
  o.Set("pushedAtUs", I64(env, e.pushed_at_us));
  o.Set("payload", Buf(env, e.payload, e.payload_len));
  return o;
}

Napi::Value Db::RingRead(const Napi::CallbackInfo &info) {
  std::string ring = Text(info[0], "ring");
  int64_t since = OptInt(info[1], "since", INT64_MIN, INT64_MAX, 0);
  size_t limit = static_cast<size_t>(OptInt(info[2], "limit", 0, INT64_MAX, 0));
  auto out = std::make_shared<Owned<sqlq_ring_entry, sqlq_ring_entries_free, EntryObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_ring_read(h, ring.c_str(), since, limit, &out->p, &out->n); },
             ArrayOf(out));
}

Napi::Value Db::RingWait(const Napi::CallbackInfo &info) {
  std::string ring = Text(info[0], "ring");
  int64_t since = OptInt(info[1], "since", INT64_MIN, INT64_MAX, 0);
  double timeout = OptNum(info[2], "timeout", -1);
  return Run(info, [=](sqlq_db *h) { return sqlq_ring_wait(h, ring.c_str(), since, timeout); }, WaitResult,
             (1u << SQLQ_TIMEOUT) | (1u << SQLQ_INTERRUPTED));
}

Napi::Value Db::RingDrop(const Napi::CallbackInfo &info) { return OnName(info, "ring", sqlq_ring_drop); }

Napi::Value RingInfoObject(Napi::Env env, const sqlq_ring_info &r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Str(env, r.name));
  o.Set("capacity", I64(env, r.capacity));
  o.Set("entries", I64(env, r.entries));
  o.Set("lastSeq", I64(env, r.last_seq));
  o.Set("createdAtUs", I64(env, r.created_at_us));
  return o;
}

// A listing by name (sqlq_rings, sqlq_pools) of the names after
// options.after (undefined or null: from the first), at most options.limit
// (default 100), with info[0] the options: resolves with the array f gave.
template <class T, void (*Free)(T *, size_t), Napi::Value (*Convert)(Napi::Env, const T &)>
Napi::Value ByName(Db *db, const Napi::CallbackInfo &info,
                   int (*f)(sqlq_db *, const char *, size_t, T **, size_t *)) {
  Napi::Object opts = Opts(info[0], "options");
  std::string after;
  bool has_after = OptText(opts.Get("after"), "after", &after);
  size_t limit = static_cast<size_t>(Limit(opts, 100));
  auto out = std::make_shared<Owned<T, Free, Convert>>();
  return db->Run(info, [=](sqlq_db *h) { return f(h, has_after ? after.c_str() : nullptr, limit, &out->p, &out->n); },
                 ArrayOf(out));
}

// rings({after, limit}) (libsqlq 1.1): the rings named after after, by name.
Napi::Value Db::Rings(const Napi::CallbackInfo &info) {
  return ByName<sqlq_ring_info, sqlq_ring_infos_free, RingInfoObject>(this, info, sqlq_rings);
}

// ---------------------------------------------------------------------------
// Pools.

Napi::Value ItemObject(Napi::Env env, const sqlq_pool_item &it) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", I64(env, it.id));
  o.Set("item", Str(env, it.item));
  o.Set("lastUsedAtUs", I64(env, it.last_used_at_us));
  o.Set("uses", I64(env, it.uses));
  o.Set("heldUntilUs", I64(env, it.held_until_us));
  o.Set("token", Token(env, it.token));
  return o;
}

using Items = Owned<sqlq_pool_item, sqlq_pool_items_free, ItemObject>;

Napi::Value Db::PoolAdd(const Napi::CallbackInfo &info) {
  std::string pool = Text(info[0], "pool"), item = Text(info[1], "item");
  auto added = std::make_shared<int>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_pool_add(h, pool.c_str(), item.c_str(), added.get()); },
             [added](Napi::Env env, int) { return Napi::Boolean::New(env, *added != 0); });
}

Napi::Value Db::PoolRemove(const Napi::CallbackInfo &info) {
  std::string pool = Text(info[0], "pool"), item = Text(info[1], "item");
  return Run(info, [=](sqlq_db *h) { return sqlq_pool_remove(h, pool.c_str(), item.c_str()); }, nullptr);
}

Napi::Value Db::PoolList(const Napi::CallbackInfo &info) {
  std::string pool = Text(info[0], "pool");
  auto out = std::make_shared<Items>();
  return Run(info, [=](sqlq_db *h) { return sqlq_pool_list(h, pool.c_str(), &out->p, &out->n); }, ArrayOf(out));
}

Napi::Value Db::PoolNext(const Napi::CallbackInfo &info) {
  std::string pool = Text(info[0], "pool");
  double hold = OptNum(info[1], "hold", 0);
  auto out = std::make_shared<Items>();
  return Run(info,
             [=](sqlq_db *h) {
               int rc = sqlq_pool_next(h, pool.c_str(), hold, &out->p);
               if (rc == SQLQ_OK) out->n = 1;
               return rc;
             },
             [out](Napi::Env env, int) { return ItemObject(env, out->p[0]); });
}

Napi::Value Db::PoolRelease(const Napi::CallbackInfo &info) {
  std::string pool = Text(info[0], "pool"), item = Text(info[1], "item");
  int64_t token = Int(info[2], "token", INT64_MIN, INT64_MAX);
  return Run(info, [=](sqlq_db *h) { return sqlq_pool_release(h, pool.c_str(), item.c_str(), token); }, nullptr);
}

Napi::Value PoolInfoObject(Napi::Env env, const sqlq_pool_info &p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Str(env, p.name));
  o.Set("items", I64(env, p.items));
  o.Set("held", I64(env, p.held));
  o.Set("lastUsedAtUs", I64(env, p.last_used_at_us));
  return o;
}

// pools({after, limit}) (libsqlq 1.1): the pools named after after, by name.
Napi::Value Db::Pools(const Napi::CallbackInfo &info) {
  return ByName<sqlq_pool_info, sqlq_pool_infos_free, PoolInfoObject>(this, info, sqlq_pools);
}

// ---------------------------------------------------------------------------
// Subscriptions.

Napi::Value Db::Subscribe(const Napi::CallbackInfo &info) {
  std::string table = Text(info[0], "table");
  unsigned actions = static_cast<unsigned>(Int(info[1], "actions", 0, UINT32_MAX));
  std::string tag = Text(info[2], "tag");
  unsigned flags = static_cast<unsigned>(OptInt(info[3], "flags", 0, UINT32_MAX, 0));
  return Run(info, [=](sqlq_db *h) { return sqlq_subscribe(h, table.c_str(), actions, tag.c_str(), flags); },
             nullptr);
}

Napi::Value Db::Unsubscribe(const Napi::CallbackInfo &info) {
  std::string table = Text(info[0], "table"), tag = Text(info[1], "tag");
  return Run(info, [=](sqlq_db *h) { return sqlq_unsubscribe(h, table.c_str(), tag.c_str()); }, nullptr);
}

Napi::Value SubscriptionObject(Napi::Env env, const sqlq_subscription &s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("table", Str(env, s.table));
  o.Set("tag", Str(env, s.tag));
  o.Set("actions", Napi::Number::New(env, s.actions));
  o.Set("flags", Napi::Number::New(env, s.flags));
  o.Set("createdAtUs", I64(env, s.created_at_us));
  o.Set("status", Napi::Number::New(env, s.status));
  return o;
}

Napi::Value Db::Subscriptions(const Napi::CallbackInfo &info) {
  auto out = std::make_shared<Owned<sqlq_subscription, sqlq_subscriptions_free, SubscriptionObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_subscriptions(h, &out->p, &out->n); }, ArrayOf(out));
}

// ---------------------------------------------------------------------------
// Schedules and retention (libsqlq 1.1).

// cronAdd(name, spec, queue, payload, zone, missed): zone and missed as
// lib/index.js resolved them (a zone name, a number).
Napi::Value Db::CronAdd(const Napi::CallbackInfo &info) {
  std::string name = Text(info[0], "name"), spec = Text(info[1], "spec"), queue = Text(info[2], "queue");
  std::string payload = Bytes(info[3], "payload"), zone = Text(info[4], "zone");
  int missed = static_cast<int>(Int(info[5], "missed", INT32_MIN, INT32_MAX));
  return Run(info,
             [=](sqlq_db *h) {
               sqlq_schedule sc = {};
               sc.name = name.c_str();
               sc.spec = spec.c_str();
               sc.zone = zone.c_str();
               sc.queue = queue.c_str();
               sc.payload = payload.data();
               sc.payload_len = payload.size();
               sc.missed = missed;
               return sqlq_cron_add(h, &sc);
             },
             nullptr);
}

Napi::Value Db::CronRemove(const Napi::CallbackInfo &info) { return OnName(info, "name", sqlq_cron_remove); }
Napi::Value Db::CronPause(const Napi::CallbackInfo &info) { return OnName(info, "name", sqlq_cron_pause); }
Napi::Value Db::CronResume(const Napi::CallbackInfo &info) { return OnName(info, "name", sqlq_cron_resume); }

Napi::Value ScheduleObject(Napi::Env env, const sqlq_schedule &sc) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Str(env, sc.name));
  o.Set("spec", Str(env, sc.spec));
  o.Set("zone", Str(env, sc.zone));
  o.Set("queue", Str(env, sc.queue));
  o.Set("payload", Buf(env, static_cast<const unsigned char *>(sc.payload), sc.payload_len));
  o.Set("missed", Napi::Number::New(env, sc.missed));
  o.Set("paused", Napi::Boolean::New(env, sc.paused != 0));
  o.Set("nextAtUs", I64(env, sc.next_at_us));
  o.Set("lastAtUs", I64(env, sc.last_at_us));
  return o;
}

Napi::Value Db::CronList(const Napi::CallbackInfo &info) {
  auto out = std::make_shared<Owned<sqlq_schedule, sqlq_schedules_free, ScheduleObject>>();
  return Run(info, [=](sqlq_db *h) { return sqlq_cron_list(h, &out->p, &out->n); }, ArrayOf(out));
}

// cronTick(nowAtUs): {enqueued, nextAtUs}.
Napi::Value Db::CronTick(const Napi::CallbackInfo &info) {
  int64_t now = OptInt(info[0], "nowAtUs", 0, INT64_MAX, 0);
  auto r = std::make_shared<std::pair<size_t, int64_t>>(0, 0);
  return Run(info, [=](sqlq_db *h) { return sqlq_cron_tick(h, now, &r->first, &r->second); },
             [r](Napi::Env env, int) {
               Napi::Object o = Napi::Object::New(env);
               o.Set("enqueued", Napi::Number::New(env, static_cast<double>(r->first)));
               o.Set("nextAtUs", I64(env, r->second));
               return o;
             });
}

Napi::Value Db::RetentionSet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  double keep_for = OptNum(info[1], "keepFor", 0);
  int64_t keep_count = OptInt(info[2], "keepCount", INT64_MIN, INT64_MAX, 0);
  return Run(info, [=](sqlq_db *h) { return sqlq_retention_set(h, queue.c_str(), keep_for, keep_count); }, nullptr);
}

// retentionGet(queue): {keepFor, keepCount}, 0 where there is no limit.
Napi::Value Db::RetentionGet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto r = std::make_shared<std::pair<double, int64_t>>(0, 0);
  return Run(info, [=](sqlq_db *h) { return sqlq_retention_get(h, queue.c_str(), &r->first, &r->second); },
             [r](Napi::Env env, int) {
               Napi::Object o = Napi::Object::New(env);
               o.Set("keepFor", Napi::Number::New(env, r->first));
               o.Set("keepCount", I64(env, r->second));
               return o;
             });
}

Napi::Value Db::HistoryPrune(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  size_t max = static_cast<size_t>(OptInt(info[1], "max", 0, INT64_MAX, 0));
  auto pruned = std::make_shared<size_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_history_prune(h, queue.c_str(), max, pruned.get()); },
             [pruned](Napi::Env env, int) { return Napi::Number::New(env, static_cast<double>(*pruned)); });
}

Napi::Value Db::ConcurrencySet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  int64_t max = Int(info[1], "maxRunning", INT64_MIN, INT64_MAX);
  return Run(info, [=](sqlq_db *h) { return sqlq_concurrency_set(h, queue.c_str(), max); }, nullptr);
}

Napi::Value Db::ConcurrencyGet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto max = std::make_shared<int64_t>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_concurrency_get(h, queue.c_str(), max.get()); },
             [max](Napi::Env env, int) { return I64(env, *max); });
}

// rateSet(queue, maxStarts, period): period in seconds; one that is not
// finite, or past any period the library takes, is passed as -1, which it
// refuses (MisuseError) unless maxStarts is 0.
Napi::Value Db::RateSet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  int64_t max = Int(info[1], "maxStarts", INT64_MIN, INT64_MAX);
  double period = OptNum(info[2], "period", 0);
  int64_t period_us = std::isfinite(period) && std::fabs(period) <= 1e12 ? std::llround(period * 1e6) : -1;
  return Run(info, [=](sqlq_db *h) { return sqlq_rate_set(h, queue.c_str(), max, period_us); }, nullptr);
}

// rateGet(queue): {maxStarts, period} (seconds), 0 and 0 when it has none.
Napi::Value Db::RateGet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto r = std::make_shared<std::pair<int64_t, int64_t>>(0, 0);
  return Run(info, [=](sqlq_db *h) { return sqlq_rate_get(h, queue.c_str(), &r->first, &r->second); },
             [r](Napi::Env env, int) {
               Napi::Object o = Napi::Object::New(env);
               o.Set("maxStarts", I64(env, r->first));
               o.Set("period", Napi::Number::New(env, static_cast<double>(r->second) / 1e6));
               return o;
             });
}

Napi::Value Db::GroupLimitSet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  int64_t per_group = Int(info[1], "perGroup", INT64_MIN, INT64_MAX);
  return Run(info, [=](sqlq_db *h) { return sqlq_group_limit_set(h, queue.c_str(), per_group); },
             nullptr);
}

Napi::Value Db::GroupLimitGet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto per_group = std::make_shared<int64_t>(1);
  return Run(info, [=](sqlq_db *h) { return sqlq_group_limit_get(h, queue.c_str(), per_group.get()); },
             [per_group](Napi::Env env, int) { return I64(env, *per_group); });
}

Napi::Value Db::FairSet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  if (!info[1].IsBoolean()) Bad(info.Env(), "fair", "a boolean");
  int fair = info[1].As<Napi::Boolean>().Value() ? 1 : 0;
  return Run(info, [=](sqlq_db *h) { return sqlq_fair_set(h, queue.c_str(), fair); }, nullptr);
}

Napi::Value Db::FairGet(const Napi::CallbackInfo &info) {
  std::string queue = Text(info[0], "queue");
  auto fair = std::make_shared<int>(0);
  return Run(info, [=](sqlq_db *h) { return sqlq_fair_get(h, queue.c_str(), fair.get()); },
             [fair](Napi::Env env, int) { return Napi::Boolean::New(env, *fair != 0); });
}

Napi::Function Db::Init(Napi::Env env) {
  Napi::Function f = DefineClass(
      env, "NativeDb",
      {InstanceMethod("close", &Db::Close),
       InstanceMethod("interrupt", &Db::Interrupt),
       InstanceMethod("closed", &Db::Closed),
       InstanceMethod("init", &Db::Init_),
       InstanceMethod("enqueue", &Db::Enqueue),
       InstanceMethod("enqueueBatch", &Db::EnqueueBatch),
       InstanceMethod("claim", &Db::Claim),
       InstanceMethod("ack", &Db::Ack),
       InstanceMethod("ackBatch", &Db::AckBatch),
       InstanceMethod("fail", &Db::Fail),
       InstanceMethod("release", &Db::Release),
       InstanceMethod("touch", &Db::Touch),
       InstanceMethod("wait", &Db::Wait),
       InstanceMethod("waitClaim", &Db::WaitClaim),
       InstanceMethod("pause", &Db::Pause),
       InstanceMethod("resume", &Db::Resume),
       InstanceMethod("stats", &Db::Stats),
       InstanceMethod("health", &Db::Health),
       InstanceMethod("summary", &Db::Summary),
       InstanceMethod("list", &Db::List),
       InstanceMethod("retry", &Db::Retry),
       InstanceMethod("cancel", &Db::Cancel),
       InstanceMethod("purge", &Db::Purge),
       InstanceMethod("begin", &Db::Begin),
       InstanceMethod("commit", &Db::Commit),
       InstanceMethod("rollback", &Db::Rollback),
       InstanceMethod("lockAcquire", &Db::LockAcquire),
       InstanceMethod("lockXact", &Db::LockXact),
       InstanceMethod("locks", &Db::Locks),
       InstanceMethod("lockKey", &Db::LockKey),
       InstanceMethod("ringCreate", &Db::RingCreate),
       InstanceMethod("ringPush", &Db::RingPush),
       InstanceMethod("ringPushBatch", &Db::RingPushBatch),
       InstanceMethod("ringRead", &Db::RingRead),
       InstanceMethod("ringWait", &Db::RingWait),
       InstanceMethod("ringDrop", &Db::RingDrop),
       InstanceMethod("rings", &Db::Rings),
       InstanceMethod("poolAdd", &Db::PoolAdd),
       InstanceMethod("poolRemove", &Db::PoolRemove),
       InstanceMethod("poolList", &Db::PoolList),
       InstanceMethod("poolNext", &Db::PoolNext),
       InstanceMethod("poolRelease", &Db::PoolRelease),
       InstanceMethod("pools", &Db::Pools),
       InstanceMethod("subscribe", &Db::Subscribe),
       InstanceMethod("unsubscribe", &Db::Unsubscribe),
       InstanceMethod("subscriptions", &Db::Subscriptions),
       InstanceMethod("cronAdd", &Db::CronAdd),
       InstanceMethod("cronRemove", &Db::CronRemove),
       InstanceMethod("cronPause", &Db::CronPause),
       InstanceMethod("cronResume", &Db::CronResume),
       InstanceMethod("cronList", &Db::CronList),
       InstanceMethod("cronTick", &Db::CronTick),
       InstanceMethod("retentionSet", &Db::RetentionSet),
       InstanceMethod("retentionGet", &Db::RetentionGet),
       InstanceMethod("historyPrune", &Db::HistoryPrune),
       InstanceMethod("concurrencySet", &Db::ConcurrencySet),
       InstanceMethod("concurrencyGet", &Db::ConcurrencyGet),
       InstanceMethod("rateSet", &Db::RateSet),
       InstanceMethod("rateGet", &Db::RateGet),
       InstanceMethod("groupLimitSet", &Db::GroupLimitSet),
       InstanceMethod("groupLimitGet", &Db::GroupLimitGet),
       InstanceMethod("fairSet", &Db::FairSet),
       InstanceMethod("fairGet", &Db::FairGet)});
  ctor = new Napi::FunctionReference(Napi::Persistent(f));
  return f;
}

// ---------------------------------------------------------------------------
// Opening: sqlq_open() on the pool; the promise resolves with a NativeDb,
// or rejects after closing the handle that failed to open.

class Open : public Napi::AsyncWorker {
 public:
  Open(Napi::Env env, std::string url, sqlq_options o)
      : Napi::AsyncWorker(env, "sqlq"), deferred_(Napi::Promise::Deferred::New(env)), url_(std::move(url)), o_(o) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    rc_ = sqlq_open(url_.c_str(), &o_, &db_);
    if (rc_ != SQLQ_OK) {
      msg_ = sqlq_errmsg(db_);
      sqlq_close(db_);
      db_ = nullptr;
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (rc_ != SQLQ_OK) {
      deferred_.Reject(MakeError(env, rc_, msg_));
      return;
    }
    Napi::Object o = Db::ctor->New({Napi::External<sqlq_db>::New(env, db_)});
    o.Set("backend", Str(env, sqlq_backend(db_)));
    o.Set("urlRedacted", Str(env, sqlq_url_redacted(db_)));
    o.Set("payloadLimit", Napi::Number::New(env, static_cast<double>(sqlq_payload_limit(db_))));
    deferred_.Resolve(o);
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::string url_;
  sqlq_options o_;
  sqlq_db *db_ = nullptr;
  int rc_ = SQLQ_OK;
  std::string msg_;
};

Napi::Value OpenDb(const Napi::CallbackInfo &info) {
  std::string url = Text(info[0], "url");
  Napi::Object opts = Opts(info[1], "options");
  sqlq_options o = Options<sqlq_options>();
  o.payload_limit = static_cast<size_t>(OptInt(opts.Get("payloadLimit"), "payloadLimit", 0, INT64_MAX, 0));
  o.keep_history = opts.Get("keepHistory").ToBoolean();
  o.busy_timeout = OptNum(opts.Get("busyTimeout"), "busyTimeout", 0);
  Open *w = new Open(info.Env(), url, o);
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

Napi::Value SetErrorClasses(const Napi::CallbackInfo &info) {
  if (!info[0].IsArray()) Bad(info.Env(), "classes", "an array");
  delete error_classes;
  error_classes = new Napi::ObjectReference(Napi::Persistent(info[0].As<Napi::Object>()));
  return info.Env().Undefined();
}

Napi::Value StatusName(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), sqlq_status_name(static_cast<int>(Int(info[0], "status", INT32_MIN, INT32_MAX))));
}

Napi::Object InitAll(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeDb", Db::Init(env));
  exports.Set("NativeLock", Lock::Init(env));
  exports.Set("open", Napi::Function::New(env, OpenDb));
  exports.Set("setErrorClasses", Napi::Function::New(env, SetErrorClasses));
  exports.Set("statusName", Napi::Function::New(env, StatusName));
  exports.Set("version", Napi::String::New(env, sqlq_version()));
  exports.Set("versionNumber", Napi::Number::New(env, sqlq_version_number()));
  return exports;
}

}  // namespace

NODE_API_MODULE(sqlq, InitAll)
