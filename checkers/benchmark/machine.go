package benchmark

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Machine says what a run was measured on, as far as it moves the figures: how an idle processor
// waits, and the load before and after. A line is two cross-process wake-ups; on a virtual
// machine whose idle processors halt at once (guest halt-polling off), waking one costs tens of
// microseconds, which is most of an idle line (docs/checker-benchmark.md).
type Machine struct {
	// IdleDriver is the cpuidle driver (/sys/devices/system/cpu/cpuidle/current_driver), e.g.
	// haltpoll in a KVM guest, intel_idle or acpi_idle on hardware; empty when unknown.
	IdleDriver string `json:"cpuidle_driver,omitempty"`
	// GuestHaltPollNS is how long an idle processor of a KVM guest polls before it halts
	// (/sys/module/haltpoll/parameters/guest_halt_poll_ns); absent without that module.
	GuestHaltPollNS *int64 `json:"guest_halt_poll_ns,omitempty"`
	// LoadAverageStart and LoadAverageEnd are /proc/loadavg's 1, 5 and 15 minute figures when
	// the run began and when it ended.
	LoadAverageStart [3]float64 `json:"load_average_start"`
	LoadAverageEnd   [3]float64 `json:"load_average_end"`
}

// machineNow reads what Machine holds except LoadAverageEnd; what cannot be read is left out.
func machineNow() *Machine {
	m := &Machine{}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpuidle/current_driver"); err == nil {
		m.IdleDriver = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/sys/module/haltpoll/parameters/guest_halt_poll_ns"); err == nil {
		if ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			m.GuestHaltPollNS = &ns
		}
	}
	m.LoadAverageStart, _ = loadAverage()
	return m
}

// loadAverage reads /proc/loadavg.
func loadAverage() ([3]float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return [3]float64{}, err
	}
	return parseLoadAverage(string(b))
}

// parseLoadAverage reads the first three fields of /proc/loadavg ("0.52 0.58 0.59 1/467 12345").
func parseLoadAverage(s string) ([3]float64, error) {
	var la [3]float64
	f := strings.Fields(s)
	if len(f) < 3 {
		return la, fmt.Errorf("load average %q: want three numbers", s)
	}
	for i := range la {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return [3]float64{}, fmt.Errorf("load average %q: %w", s, err)
		}
		la[i] = v
	}
	return la, nil
}
