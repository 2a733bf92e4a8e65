#include "swo/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "records/record_line.hpp"

namespace tp::swo {
namespace {

constexpr std::uint16_t console_port = 0;
constexpr std::uint16_t rtos_port = 1;
constexpr std::uint16_t marker_port = 2;
constexpr std::uint16_t counter_port = 3;
constexpr std::uint32_t task_count = 4;
constexpr std::uint16_t systick_exception = 15;
constexpr std::uint32_t first_irq_exception = 16;

// TaskIsr record types (Callisto protocol "Binary Protocol").
enum class RtosRecord : std::uint8_t { task_switch = 1, isr_enter = 2, isr_exit = 3, idle_enter = 4, idle_exit = 5 };

constexpr std::array<std::string_view, task_count + 1> task_names{"idle", "sensor", "control", "comms", "logger"};
constexpr std::array<std::uint32_t, task_count + 1> task_code{0x08000100, 0x08001000, 0x08002400, 0x08003800,
                                                              0x08004c00};

std::array<std::uint8_t, 9> rtos_record(RtosRecord type, std::uint32_t a, std::uint32_t b) {
  return {
      static_cast<std::uint8_t>(type),     static_cast<std::uint8_t>(a),        static_cast<std::uint8_t>(a >> 8U),
      static_cast<std::uint8_t>(a >> 16U), static_cast<std::uint8_t>(a >> 24U), static_cast<std::uint8_t>(b),
      static_cast<std::uint8_t>(b >> 8U),  static_cast<std::uint8_t>(b >> 16U), static_cast<std::uint8_t>(b >> 24U)};
}

}  // namespace

RecordKind record_kind_of(SimulatedKind kind) {
  constexpr std::array<RecordKind, simulated_kind_count> kinds{
      RecordKind::text,       RecordKind::task_switch, RecordKind::isr_enter, RecordKind::isr_exit,
      RecordKind::idle_enter, RecordKind::idle_exit,   RecordKind::marker,    RecordKind::counter,
      RecordKind::exception,  RecordKind::pc_sample,   RecordKind::overflow};
  return kinds[static_cast<std::size_t>(kind)];
}

std::string_view simulated_kind_name(SimulatedKind kind) {
  return kind_name(record_kind_of(kind));
}

// One event being emitted: its packets go to `out`, its records (only when asked for) to
// `truth`, stamped with the time of the LTS that will follow them.
struct SimulatedTarget::Emit {
  itm::ItmStreamEncoder encoder;
  std::string* truth;
  std::vector<SimulatedKind>& kinds;
  const std::uint64_t& now;

  // Counts a record and, when records are wanted, writes it through the record's writer:
  // the fields itm-decode must give for it (a subset of its record: it adds names).
  template <typename Fill>
  void record(std::uint16_t port, SimulatedKind kind, const Fill& fill) {
    kinds.push_back(kind);
    if (truth == nullptr) return;
    thread_local OutBuffer line;
    line.clear();
    const bool dwt = kind == SimulatedKind::exception || kind == SimulatedKind::pc_sample;
    RecordLine record(line, {now, clock_name(RecordClock::cycles), port, record_kind_of(kind),
                             source_name(dwt ? RecordSource::dwt : RecordSource::itm)});
    fill(record.data());
    record.end();
    truth->append(line.data(), line.size());
  }
  // A record without "data".
  void record(std::uint16_t port, SimulatedKind kind) {
    record(port, kind, [](RecordData&) {});
  }
};

SimulatedTarget::SimulatedTarget(SimulatorOptions options)
    : options_(options), rng_(options.seed), next_tick_(options.cpu_hz / 1000U) {}

std::uint32_t SimulatedTarget::pick(std::uint32_t low, std::uint32_t high) {
  return std::uniform_int_distribution<std::uint32_t>(low, high)(rng_);
}

void SimulatedTarget::next(itm::ByteBuffer& out, std::string* truth) {
  last_kinds_.clear();
  Emit e{itm::ItmStreamEncoder(out), truth, last_kinds_, now_};
  if (!started_) {
    e.encoder.sync();
    started_ = true;
  }
  // Time advances by what the firmware did since the previous event (always by at least
  // one cycle, so each LTS has a delta and the records made meanwhile carry its time).
  const std::uint64_t previous = now_;
  now_ += pick(40, current_task_ == 0 ? 6000 : 1500);
  if (now_ >= next_tick_) {
    now_ = std::max(next_tick_, previous + 1);  // a long ISR may have run past the tick
    next_tick_ += options_.cpu_hz / 1000U;
    systick(e);
  } else {
    const std::uint32_t what = pick(0, 999);
    if (what < 300) {
      console_line(e);
    } else if (what < 520) {
      pc_sample(e);
    } else if (what < 640) {
      peripheral_irq(e);
    } else if (what < 760) {
      counter(e);
    } else if (what < 860) {
      marker(e);
    } else if (what < 998) {
      switch_task(e);
    } else {
      overflow(e);
    }
  }
  timestamp(e);
  for (const auto kind : last_kinds_) ++counts_[static_cast<std::size_t>(kind)];
}

void SimulatedTarget::forget_last() noexcept {
  for (const auto kind : last_kinds_) --counts_[static_cast<std::size_t>(kind)];
  last_kinds_.clear();
}

// An LTS after each event: itm-decode gives the records before it this time.
void SimulatedTarget::timestamp(Emit& e) {
  e.encoder.timestamp(now_ - stamped_);
  stamped_ = now_;
}

void SimulatedTarget::console_line(Emit& e) {
  const std::uint32_t task = current_task_ == 0 ? 1 : current_task_;
  line_.clear();
  auto out = std::back_inserter(line_);
  switch (pick(0, 3)) {
    case 0:
      fmt::format_to(out, "[{:>10}] {}: temperature {}.{} C\n", now_, task_names[task], pick(18, 31), pick(0, 9));
      break;
    case 1:
      fmt::format_to(out, "[{:>10}] {}: frame {} sent, {} bytes\n", now_, task_names[task], frames_, pick(16, 512));
      break;
    case 2:
      fmt::format_to(out, "[{:>10}] {}: setpoint {} reached after {} us\n", now_, task_names[task], pick(100, 999),
                     pick(10, 5000));
      break;
    default:
      fmt::format_to(out, "[{:>10}] {}: line {} ok\n", now_, task_names[task], line_number_);
      break;
  }
  ++line_number_;
  e.encoder.text(console_port, line_);
  // The message is the line without its newline.
  e.record(console_port, SimulatedKind::text,
           [&](RecordData& d) { d.string("message", std::string_view(line_).substr(0, line_.size() - 1)); });
}

void SimulatedTarget::isr(Emit& e, std::uint16_t exception_number, std::uint32_t duration) {
  const std::uint32_t isr_id = exception_number;
  e.encoder.bytes(rtos_port, rtos_record(RtosRecord::isr_enter, isr_id, 0), 1);
  e.record(rtos_port, SimulatedKind::isr_enter, [&](RecordData& d) { d.uint("isr_id", isr_id); });
  e.encoder.packet(itm::make_exception(exception_number, itm::ExceptionAction::enter));
  e.record(0, SimulatedKind::exception,
           [&](RecordData& d) { d.uint("number", exception_number).string("action", "enter"); });
  timestamp(e);
  now_ += duration;
  e.encoder.bytes(rtos_port, rtos_record(RtosRecord::isr_exit, isr_id, 0), 1);
  e.record(rtos_port, SimulatedKind::isr_exit, [&](RecordData& d) { d.uint("isr_id", isr_id); });
  e.encoder.packet(itm::make_exception(exception_number, itm::ExceptionAction::exit));
  e.record(0, SimulatedKind::exception,
           [&](RecordData& d) { d.uint("number", exception_number).string("action", "exit"); });
  e.encoder.packet(itm::make_exception(0, itm::ExceptionAction::resume));
  e.record(0, SimulatedKind::exception, [](RecordData& d) { d.uint("number", 0).string("action", "resume"); });
}

void SimulatedTarget::systick(Emit& e) {
  isr(e, systick_exception, pick(60, 200));
  if (pick(0, 3) == 0) switch_task(e);  // the scheduler runs on the tick
}

void SimulatedTarget::peripheral_irq(Emit& e) {
  // USART1, DMA1 channel 2, TIM2, EXTI0 on an STM32-like part.
  constexpr std::array<std::uint16_t, 4> irqs{37, 12, 28, 6};
  isr(e, static_cast<std::uint16_t>(first_irq_exception + irqs[pick(0, static_cast<std::uint32_t>(irqs.size() - 1))]),
      pick(100, 2000));
}

void SimulatedTarget::switch_task(Emit& e) {
  const std::uint32_t to = pick(0, task_count);
  if (to == current_task_) return;
  if (to == 0) {
    e.encoder.bytes(rtos_port, rtos_record(RtosRecord::idle_enter, 0, 0), 1);
    e.record(rtos_port, SimulatedKind::idle_enter);
  } else if (current_task_ == 0) {
    e.encoder.bytes(rtos_port, rtos_record(RtosRecord::idle_exit, 0, 0), 1);
    e.record(rtos_port, SimulatedKind::idle_exit);
  }
  if (to != 0) {
    // Task switches are written a byte at a time by some ports, a word by others.
    e.encoder.bytes(rtos_port, rtos_record(RtosRecord::task_switch, current_task_, to), pick(0, 1) == 0 ? 1 : 4);
    e.record(rtos_port, SimulatedKind::task_switch,
             [&](RecordData& d) { d.uint("from_task", current_task_).uint("to_task", to); });
  }
  current_task_ = to;
}

void SimulatedTarget::marker(Emit& e) {
  const std::uint32_t id = pick(1, 6);
  if (id == 1) ++frames_;
  e.encoder.write(marker_port, id, 4);
  e.record(marker_port, SimulatedKind::marker, [&](RecordData& d) { d.uint("id", id); });
}

void SimulatedTarget::counter(Emit& e) {
  const std::uint32_t id = pick(0, static_cast<std::uint32_t>(counter_values_.size() - 1));
  auto& value = counter_values_[id];
  value = id == 0 ? pick(0, 16) : value + pick(1, 1000);  // queue depth; byte totals
  std::array<std::uint8_t, 12> record{};
  for (std::size_t i = 0; i < 4; ++i) record[i] = static_cast<std::uint8_t>(id >> (8U * i));
  for (std::size_t i = 0; i < 8; ++i) record[4 + i] = static_cast<std::uint8_t>(value >> (8U * i));
  e.encoder.bytes(counter_port, record, 4);
  e.record(counter_port, SimulatedKind::counter, [&](RecordData& d) { d.uint("counter_id", id).uint("value", value); });
}

void SimulatedTarget::pc_sample(Emit& e) {
  if (current_task_ == 0 && pick(0, 1) == 0) {
    e.encoder.packet(itm::make_sleeping_pc_sample());
    e.record(0, SimulatedKind::pc_sample, [](RecordData& d) { d.uint("pc", 0).boolean("sleep", true); });
    return;
  }
  const std::uint32_t pc = task_code[current_task_] + 2U * pick(0, 0x7ff);
  e.encoder.packet(itm::make_pc_sample(pc));
  e.record(0, SimulatedKind::pc_sample, [&](RecordData& d) { d.uint("pc", pc).boolean("sleep", false); });
}

void SimulatedTarget::overflow(Emit& e) {
  e.encoder.packet(itm::make_overflow());
  e.record(0, SimulatedKind::overflow, [](RecordData& d) { d.empty(); });
}

}  // namespace tp::swo
