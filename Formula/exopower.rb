# exopower's Homebrew formula, in a tap's layout:
#   brew tap exopower/exopower https://github.com/exopower/exopower
#   brew install exopower          (the tagged release below)
#   brew install --HEAD exopower   (main)
class Exopower < Formula
  desc "Energy meter for Apple Silicon SoCs (CPU, GPU, ANE), from powermetrics"
  homepage "https://github.com/exopower/exopower"
  # A git URL with the tag: Homebrew checks out the tag itself, so no
  # tarball checksum has to be carried here.
  url "https://github.com/exopower/exopower.git", tag: "v0.1.0"
  head "https://github.com/exopower/exopower.git", branch: "main"

  depends_on "go" => :build
  depends_on arch: :arm64
  depends_on :macos

  def install
    # A tag's checkout is built without its .git, so Go finds no version:
    # it is stamped in as scripts/release.sh does.
    ldflags = "-s -w"
    ldflags += " -X main.version=v#{version}" unless build.head?
    system "go", "build", *std_go_args(ldflags:), "./cmd/exopower"
    generate_completions_from_executable(bin/"exopower", "completion")
    man1.install Dir["man/*.1"]
    # Prometheus's rules and alerts (with their promtool unit tests) and
    # the Grafana dashboard, for the machines that watch the fleet.
    (pkgshare/"prometheus").install "deploy/prometheus/rules.yml", "deploy/prometheus/alerts.yml",
                                    "deploy/prometheus/rules_test.yml"
    (pkgshare/"grafana").install "deploy/grafana/exopower.json"
  end

  def caveats
    <<~EOS
      Prometheus rules and alerts for exopower serve, and a Grafana dashboard:
        #{opt_pkgshare}/prometheus/rules.yml
        #{opt_pkgshare}/prometheus/alerts.yml
        #{opt_pkgshare}/grafana/exopower.json
      Name the first two in Prometheus's rule_files; import the third into Grafana.
    EOS
  end

  # powermetrics needs root: the service runs as a LaunchDaemon, serving on
  # 127.0.0.1:10241 (sudo brew services start exopower).
  service do
    run [opt_bin/"exopower", "serve"]
    require_root true
    keep_alive true
    log_path var/"log/exopower.log"
    error_log_path var/"log/exopower.log"
  end

  test do
    # No root and no powermetrics here: exopower report integrates a
    # recording of two 100 ms windows written by the test (CPU 5 W, GPU 2 W).
    window = lambda do |second|
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict>" \
        "<key>elapsed_ns</key><integer>100000000</integer>" \
        "<key>timestamp</key><date>2026-01-01T00:00:0#{second}Z</date>" \
        "<key>processor</key><dict><key>cpu_energy</key><integer>500</integer>" \
        "<key>gpu_energy</key><integer>200</integer><key>ane_energy</key><integer>0</integer></dict>" \
        "</dict></plist>\n\0"
    end
    (testpath/"two.plist").write(window.call(1) + window.call(2))
    output = shell_output("#{bin}/exopower report --json #{testpath}/two.plist")
    assert_match '"energy_joules":{"total":1.4,"cpu":1,"gpu":0.4,"ane":0,"dram":null,"system":null}', output
    assert_match(/^exopower v#{Regexp.escape(version.to_s)}$/, shell_output("#{bin}/exopower --version")) unless version.head?
  end
end
