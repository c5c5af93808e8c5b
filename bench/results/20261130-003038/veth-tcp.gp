# gnuplot veth-tcp.gp (in this directory) redraws veth-tcp.png
set terminal pngcairo size 1240,640 font 'sans,9'
set output 'veth-tcp.png'
set datafile missing 'nan'
set title "veth-tcp: iperf3 TCP through a veth pair across two namespaces\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:13.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "throughput ratio (per round)"
set boxwidth 0.38
plot 1 with lines dt 2 lc 'gray' notitle, 'veth-tcp.dat' using ($1-0.19):3:4:5:(0.38):xtic(2) with boxerrorbars title "× no XDP", 'veth-tcp.dat' using ($1+0.19):6:7:8:(0.38) with boxerrorbars title "× GRO off"
